package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// warn appends a warning about the key at path, with its position.
func (l *loader) warn(s *Scenario, path, msg string) {
	s.Warnings = append(s.Warnings, l.errPath(path, msg).Error())
}

// warnMemoryUnit warns when cluster.gpu_memory is written in GB with the
// number of a GPU's GiB figure: "40GB" on an A100-40GB is 37.25 GiB, and
// the fit verdict flips. Vendors' "40GB" HBM is 40 GiB (nvidia-smi shows
// 40960 MiB).
func (l *loader) warnMemoryUnit(s *Scenario) {
	e, ok := l.idx["cluster.gpu_memory"]
	if !ok || e.val == nil {
		return
	}
	raw := strings.TrimSpace(e.val.Value)
	num, isGB := strings.CutSuffix(raw, "GB")
	if !isGB {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > 1<<20 {
		return
	}
	gib := units.Bytes(n) * units.GiB
	var match []string
	for _, g := range gpuPresets {
		if g.Memory == gib && (s.Cluster.GPU == "" || g.Name == s.Cluster.GPU) {
			match = append(match, g.Name)
		}
	}
	if len(match) == 0 {
		return
	}
	verb := "has"
	if len(match) > 1 {
		verb = "have"
	}
	l.warn(s, "cluster.gpu_memory", fmt.Sprintf("gpu_memory %s is %s, but %s %s %d GiB (vendors' GB of HBM are GiB); use %dGiB unless you mean decimal gigabytes",
		raw, units.Bytes(n*int64(units.GB)).IEC(), listOr(match), verb, n, n))
}
