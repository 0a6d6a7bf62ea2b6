package scenarios

import (
	"errors"
	"testing"
)

// TestEveryPointError: a sweep refuses a file before its first row only
// for an error every point gives (Alone, the file's own), and not when a
// grid key replaces the value the error is at or inside: a field or a
// list element of it.
func TestEveryPointError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		keys []string
		want bool
	}{
		{&Error{Msg: `unknown key "nodez" in cluster`, Alone: true}, []string{"parallelism.k"}, true},
		{&Error{Path: "training.micro_batch", Alone: true}, []string{"parallelism.k"}, true},
		{&Error{Path: "training.micro_batch", Alone: true}, []string{"training.micro_batch"}, false},
		{&Error{Path: "cluster.links[0].bandwidth", Alone: true}, []string{"cluster.links"}, false},
		{&Error{Path: "cluster.intra.bandwidth", Alone: true}, []string{"cluster.intra"}, false},
		{&Error{Path: "cluster.intra_x", Alone: true}, []string{"cluster.intra"}, true},
		{&Error{Path: "parallelism.k", Msg: "k=3 does not divide dp"}, []string{"parallelism.dp"}, false},
		{errors.New("not a scenario error"), nil, false},
		{nil, nil, false},
	} {
		if got := EveryPointError(tc.err, tc.keys); got != tc.want {
			t.Errorf("%+v under grid keys %q: %v, want %v", tc.err, tc.keys, got, tc.want)
		}
	}
}
