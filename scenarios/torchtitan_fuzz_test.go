package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImportTorchtitan feeds job config bytes to the torchtitan importer,
// seeded with torchtitan's own job configs (testdata/torchtitan) and
// small configs for each mapping: it never panics, every error is one line
// naming the file, as is every warning, and a scenario without placeholders loads, with the
// flavor's parameter count; one with placeholders is rendered too.
func FuzzImportTorchtitan(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/torchtitan/*.toml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "[", "a = ", "[model]\nflavor = \"8B\"\n",
		"[model]\nflavor = \"405B\"\nconverters = \"float8\"\n[parallelism]\ndata_parallel_replicate_degree = 2\ncontext_parallel_degree = 4\n[training]\nglobal_batch_size = 64\nlocal_batch_size = 2\nseq_len = 131072\n",
		"[model]\nflavor = \"8B_flex\"\n[parallelism]\ndata_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 128\nfsdp_reshard_after_forward = \"never\"\n[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"0\"\n",
		"[model]\nflavor = \"70B\"\n[training]\nbatch_size = 4\ncompile = true\ndata_parallel_shard_degree = 128\n[float8]\nenable_float8_linear = true\n[optimizer]\nfused = true\n",
		"[model]\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1048576\nglobal_batch_size = 549755813888\n[optimizer]\nlr = 1e308\nimplementation = \"for-loop\"\n[compile]\nenable = true\ncomponents = [\"loss\"]\n",
		"model = {flavor = \"8B\"}\n[x.y]\nz = 1979-05-27T07:32:00Z\n",
		"model = {flavor = \"8B\"}\n[job]\ndescription = 1979-05-27T07:32:00Z\n",
		"[model]\nflavor = \"8B\"\n[training]\nlocal_batch_sise = 2\n[trainng]\nseq_len = 8192\n",
		"[model]\nflavor = \"8B\"\n[training]\ndtype = \"bfloat16\"\n[parallelism]\ndata_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 8\n",
		"[job]\ncustom_config_module = \"m\"\n[model]\nflavor = \"8B\"\n[m]\nx = 1\n",
		"x = 1\n[model]\nflavor = \"8B\"\n[training]\ncompile = true\nlocal_batch_sise = 2\n[trainng]\nseq_len = 8192\n[training.steps]\nx = 1\n",
		"x = 1\n[model]\nflavor = \"8B\"\n[optimizer]\nfused = true\n[training]\nbatch_sze = 2\n[foo]\n",
		"[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[parallelism]\nexpert_parallel_degree = 8\ncontext_parallel_degree = 2\n",
		"[model]\nname = \"deepseek_v3\"\nflavor = \"671B\"\nconverters = [\"quantize.grouped_mm.float8\"]\n[parallelism]\nexpert_parallel_degree = 64\ndata_parallel_shard_degree = 128\n",
		"[model]\nname = \"deepseek_v3\"\nflavor = \"236B\"\n[parallelism]\nexpert_parallel_degree = 32\ndata_parallel_replicate_degree = 2\n",
		"[model]\nname = \"qwen3\"\nflavor = \"debugmodel_moe\"\n[parallelism]\nexpert_parallel_degree = 3\n",
		"[model]\nname = \"gpt_oss\"\nflavor = \"120b\"\n[parallelism]\nexpert_parallel_degree = 64\ncontext_parallel_degree = 2\n[training]\nseq_len = 64\n",
		"[model]\nname = \"gpt_oss\"\nflavor = \"debugmodel\"\n[training]\nseq_len = 100\nlocal_batch_size = 3\n[activation_checkpoint]\nmode = \"full\"\n",
		"[model]\nname = \"llama4\"\nflavor = \"debugmodel_irope\"\n[parallelism]\nexpert_parallel_degree = 8\n[training]\nseq_len = 1000\n",
		"[model]\nname = \"llama4\"\nflavor = \"17bx128e_irope\"\n[parallelism]\nexpert_parallel_degree = 128\ndata_parallel_replicate_degree = 1\n[training]\nseq_len = 16384\n",
		"[model]\nname = \"llama4\"\nflavor = \"17bx16e\"\n[parallelism]\ncontext_parallel_degree = 4\n[training]\nseq_len = 8192\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if tt, err := ImportTorchtitan("j.toml", data, TorchtitanCluster{}); err == nil {
			_ = tt.Scenario()
		}
		tt, err := ImportTorchtitan("j.toml", data, TorchtitanCluster{Nodes: 16, GPUsPerNode: 8, GPU: "H100-80GB"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "j.toml") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		out := tt.Scenario()
		for _, n := range tt.Notes {
			if strings.ContainsAny(n, "\n\r") {
				t.Fatalf("note %q is not one line", n)
			}
		}
		for _, w := range tt.Warnings {
			if !strings.HasPrefix(w, "j.toml") || strings.ContainsAny(w, "\n\r") {
				t.Fatalf("warning %q is not one line naming the file", w)
			}
		}
		if !tt.Complete() {
			t.Fatalf("incomplete scenario with the cluster given:\n%s", out)
		}
		s, err := Load("s.yaml", out, nil)
		if err != nil {
			t.Fatalf("the imported scenario does not load: %v\n%s", err, out)
		}
		if int64(s.Model.Params) != tt.Params {
			t.Fatalf("%d parameters, header %d", s.Model.Params, tt.Params)
		}
	})
}
