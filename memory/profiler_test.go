package memory

import (
	"testing"

	"github.com/zerosim/zerosim/units"
)

func TestNCCLBuffers(t *testing.T) {
	got, err := NCCLBuffers(1, DefaultNCCLChannels, DefaultRingConnections)
	if err != nil || got != int64(640*units.MiB) {
		t.Errorf("one ring communicator: %d, %v; want 640 MiB", got, err)
	}
	if _, err := NCCLBuffers(-1, 1, 1); err == nil {
		t.Error("negative count accepted")
	}
}

func TestReserved(t *testing.T) {
	for i, c := range []struct {
		alloc    int64
		overhead float64
		want     int64
	}{
		{0, 0.1, 0},
		{1, 0, 2 << 20},
		{100 << 20, 0.1, 112 << 20}, // 110 MiB rounds up to 112
		{int64(50 * units.GiB), 0.2, int64(60 * units.GiB)},
	} {
		got, err := Reserved(c.alloc, c.overhead)
		if err != nil || got != c.want {
			t.Errorf("%d: Reserved(%d, %g) = %d, %v; want %d", i, c.alloc, c.overhead, got, err, c.want)
		}
	}
	if _, err := Reserved(1, -0.5); err == nil {
		t.Error("negative overhead accepted")
	}
}
