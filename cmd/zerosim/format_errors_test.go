package main

import "testing"

// TestFormatErrorNamesTheCommandsFormats: an unknown --format names the
// formats of the command given, not every command's (run --format xml
// suggested csv, which run then refused: QA9 #5), and run --format csv
// says where CSV rows come from.
func TestFormatErrorNamesTheCommandsFormats(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--format", "xml"}, "zerosim: --format \"xml\": zerosim run prints table or json\n"},
		{[]string{"sweep", "default", "--format", "xml"}, "zerosim: --format \"xml\": zerosim sweep prints csv or json\n"},
		{[]string{"run", "--format", "csv"}, "zerosim: --format csv: zerosim run prints table or json: for CSV rows, zerosim sweep FILE --grid KEY=V1,V2 (a one-value grid is one run)\n"},
	} {
		out, errOut, code := runCLI(tc.args...)
		if code != 2 || out != "" || errOut != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
