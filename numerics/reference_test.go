package numerics

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceFiles checks zerosim against PyTorch 1.13 trajectories
// (testdata/reference, copied from the project's golden set; see the README
// there): Adam, AdamW and bf16 rounding bit for bit, and the toy MLP's
// parameters bit for bit given PyTorch's gradients plus zerosim's own
// forward/backward within RefLossRelTol, RefGradRelL2Tol and RefGradCosMin.
func TestReferenceFiles(t *testing.T) {
	for _, tc := range []struct {
		file, kind string
		checks     int // number of checks the file must produce
	}{
		{"adam-basic.json", "adam", 12 * 3},
		{"adamw-wd.json", "adam", 12 * 3},
		{"bf16-round.json", "bf16-round", 1},
		{"toy-h16-l3.json", "toy-mlp", 6 * (1 + 1 + 12*2)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "reference", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, err := CheckReference(f)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != tc.kind {
				t.Errorf("kind %q, want %q", res.Kind, tc.kind)
			}
			if len(res.Checks) != tc.checks {
				t.Errorf("%d checks, want %d", len(res.Checks), tc.checks)
			}
			worst := map[bool]float64{} // false: largest bounded-above metric; true: smallest cosine
			for _, c := range res.Checks {
				if !c.Exact {
					isCos := c.Minimum
					if v, ok := worst[isCos]; !ok || (isCos && c.Value < v) || (!isCos && c.Value > v) {
						worst[isCos] = c.Value
					}
				}
				if !c.Pass {
					t.Errorf("%s: %d/%d mismatches, first %s; value %g limit %g", c.Name, c.Mismatches, c.Compared, c.First, c.Value, c.Limit)
				}
			}
			if len(worst) > 0 {
				t.Logf("worst relative error %.4g, worst cosine %.6f", worst[false], worst[true])
			}
			if !res.Pass {
				t.Errorf("Pass false")
			}
		})
	}
}

// TestReferenceEndless: an endless stream (a JSON string that never ends)
// stops at MaxReferenceSize with an error naming the limit.
func TestReferenceEndless(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"format": "`), endlessA{})
	_, err := CheckReference(r)
	if err == nil || !strings.Contains(err.Error(), "larger than 67108864 bytes") {
		t.Errorf("endless reference: %v", err)
	}
}

type endlessA struct{}

func (endlessA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestReferenceTorchVersion: adam and toy-mlp files from PyTorch ≥ 2.1,
// whose Adam updates exp_avg with lerp_ (pytorch/pytorch PR #104796;
// adam.py at dc80ccded5385cca3e777472d64cfe3d874fad89), are refused with
// the version and the fix; 1.13 and 2.0 (the mul_/add_ form zerosim
// reproduces) and a generator without a version are checked. The data is
// the shipped PyTorch 1.13 file with only its generator changed: no
// PyTorch ≥ 2.1 output is shipped or needed (a pure-Python float32
// emulation of the lerp form that QA15 wrote is not a PyTorch output and
// does not appear here).
func TestReferenceTorchVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "reference", "adam-basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	const orig = `"torch 1.13.0a0 Adam(foreach=False)"`
	if !strings.Contains(string(data), orig) {
		t.Fatalf("adam-basic.json: generator %s not found", orig)
	}
	for _, tc := range []struct {
		gen     string
		refused string // "" when the file is checked (and passes)
	}{
		{"torch 2.0.1 Adam(foreach=False)", ""},
		{"torch 1.13.1", ""},
		{"my script", ""},
		{"torch 2.1.0a0 Adam(foreach=False)", "PyTorch 2.1's Adam updates exp_avg with lerp_"},
		{"torch 2.4.0 Adam(foreach=False)", "PyTorch 2.4's Adam updates exp_avg with lerp_"},
		{"Torch 3.0", "PyTorch 3.0's Adam"},
		{"PyTorch 2.4.0", "PyTorch 2.4's Adam"},
		{"pytorch==2.3.1", "PyTorch 2.3's Adam"},
		{"torch-2.1.0", "PyTorch 2.1's Adam"},
		{"made by torch/2.3.0+cu121", "PyTorch 2.3's Adam"},
		{"torch: 2.2", "PyTorch 2.2's Adam"},
		{"torchvision 0.16", ""},
	} {
		d := strings.Replace(string(data), orig, `"`+tc.gen+`"`, 1)
		res, err := CheckReference(strings.NewReader(d))
		if tc.refused == "" {
			if err != nil || !res.Pass {
				t.Errorf("%q: %v, want checked and passing", tc.gen, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "write the file with torch 1.13 or 2.0") {
			t.Errorf("%q: %v, want refused with %q and the fix", tc.gen, err, tc.refused)
		}
	}
}

// TestReferenceTorchVersionByKind (review s21 A T7): the torch ≥ 2.1 gate
// covers the kinds that run Adam: a toy-mlp file relabelled torch 2.2 is
// refused, a bf16-round file relabelled torch 2.4 (rounding did not change)
// is still checked and passes.
func TestReferenceTorchVersionByKind(t *testing.T) {
	for _, tc := range []struct {
		file, orig, gen string
		refused         bool
	}{
		{"toy-h16-l3.json", "torch 1.13.0a0 bf16 ToyModel", "torch 2.2.0 bf16 ToyModel", true},
		{"bf16-round.json", "torch 1.13.0a0 Tensor.to", "torch 2.4.0 Tensor.to", false},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "reference", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tc.orig) {
			t.Fatalf("%s: generator %q not found", tc.file, tc.orig)
		}
		res, err := CheckReference(strings.NewReader(strings.Replace(string(data), tc.orig, tc.gen, 1)))
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "reference toy-mlp") || !strings.Contains(err.Error(), "PyTorch 2.2's Adam") {
				t.Errorf("%s: %v, want refused", tc.file, err)
			}
			continue
		}
		if err != nil || !res.Pass {
			t.Errorf("%s: %v, want checked and passing", tc.file, err)
		}
	}
}
