package collectives

import (
	"strings"
	"testing"
)

// TestParseLogsWrongResultsNotTruncated: a complete row whose #wrong (or
// old error) column reports wrong results says to fix the cluster, not
// "(truncated log?)", which it also said and which sent the user to the
// file; a row that is cut off still asks.
func TestParseLogsWrongResultsNotTruncated(t *testing.T) {
	row := "     1048576        262144     float     sum      -1    71.93   14.58   27.33      0    71.47   14.67   27.51      0\n"
	for _, c := range []struct{ name, text, want string }{
		{"wrong", goodHeader + strings.Replace(row, "  0\n", "  3\n", 1), "x.log:9:116: #wrong is 3: the collective gave wrong results (fix the cluster before calibrating on it)"},
		{"old error", goodHeader + strings.Replace(row, "  0\n", "  2e+00\n", 1), `x.log:9:116: error "2e+00" is not a rounding error: the collective gave wrong results (fix the cluster before calibrating on it)`},
		{"cut", goodHeader + strings.Replace(row, "71.93", "abc", 1), `x.log:9:57: time "abc" is not a non-negative number (truncated log?)`},
	} {
		_, err := ParseLogs("x.log", strings.NewReader(c.text))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
