package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/zero"
)

// TestImportHF: the printed model section, pasted into a scenario, loads to
// the published totals; a bad file is one line and exit code 2.
func TestImportHF(t *testing.T) {
	for _, c := range []struct {
		file          string
		total, active int64
		notes         int // "# note:" lines
		mtp           int64
	}{
		// Active: the total less 32 layers × (8 − 2) experts of 3·4096·14336.
		{"../../scenarios/testdata/hf/mixtral-8x7b/config.json", 46_702_792_704, 46_702_792_704 - 32*6*3*4096*14336, 0, 0},
		{"../../scenarios/testdata/hf/gemma-2-9b/config.json", 9_241_705_984, 9_241_705_984, 2, 0},
		// Active: the total less 26 MoE layers (27, the first dense) ×
		// (64 − 6) routed experts of 3·2048·1408.
		{"../../scenarios/testdata/hf-extra/deepseek-v2-lite.json", 15_706_484_224, 15_706_484_224 - 26*58*3*2048*1408, 0, 0},
		// DeepSeek-V3 as transformers builds it (DeepseekV3Model: 61
		// layers, no MTP module): the published main-model count
		// (scenarios.TestHFDeepseekV3); active is the total less 58 MoE
		// layers × 248 of 256 experts of 3·7168·2048.
		{"../../scenarios/testdata/hf-extra/deepseek-v3.json", 671_026_419_200, 671_026_419_200 - 58*248*3*7168*2048, 4, 0},
		// With --mtp-layers 1: the checkpoint's total with its MTP layer,
		// whose MoE is a 59th such layer.
		{"../../scenarios/testdata/hf-extra/deepseek-v3.json", 682_636_487_424, 682_636_487_424 - 59*248*3*7168*2048, 4, 1},
		// Active: the total less 24 layers × (32 − 4) experts of
		// 3·2880·2880 weights and 3·2880 biases.
		{"../../scenarios/testdata/hf-extra/gpt-oss-20b.json", 20_914_757_184, 20_914_757_184 - 24*28*(3*2880*2880+3*2880), 3, 0},
		{"../../scenarios/testdata/hf-extra/gemma-3-4b-it.json", 3_880_263_168, 3_880_263_168, 3, 0},
		// Active: the total less 24 layers × (60 − 4) routed experts of 3·2048·1408.
		{"../../scenarios/testdata/hf-extra/qwen1.5-moe-a2.7b.json", 14_315_784_192, 14_315_784_192 - 24*56*3*2048*1408, 0, 0},
		// Qwen3-Next: the Gated DeltaNet blocks' linear_* dims and the
		// gated attention's output_gate print and load back; active is
		// the total less 48 MoE layers × 502 of 512 experts of
		// 3·2048·512. Without the MTP module: Qwen3-Coder-Next's
		// published 79,674,391,296 (scenarios.TestHFQwen3Next); with it
		// (--mtp-layers 1, 49 MoE layers) the published 81,324,862,720.
		{"../../scenarios/testdata/hf-extra/qwen3-next-80b-a3b-instruct.json", 79_674_391_296, 79_674_391_296 - 48*502*3*2048*512, 3, 0},
		{"../../scenarios/testdata/hf-extra/qwen3-next-80b-a3b-instruct.json", 81_324_862_720, 81_324_862_720 - 49*502*3*2048*512, 3, 1},
		// Qwen3.6-35B-A3B: the safetensors total 35,951,822,704 less the
		// vision tower's 446,571,248 (scenarios.TestHFQwen35) and, as
		// transformers builds it, less the MTP module's 844,640,768;
		// active is that less 40 (41 with the module) MoE layers × 248 of
		// 256 experts of 3·2048·512.
		{"../../scenarios/testdata/hf-extra/qwen3.6-35b-a3b.json", 34_660_610_688, 34_660_610_688 - 40*248*3*2048*512, 4, 0},
		{"../../scenarios/testdata/hf-extra/qwen3.6-35b-a3b.json", 35_505_251_456, 35_505_251_456 - 41*248*3*2048*512, 4, 1},
	} {
		args := []string{"import", "hf", c.file}
		if c.mtp > 0 {
			args = append(args, "--mtp-layers", fmt.Sprint(c.mtp))
		}
		out, stderr, code := runValidateCLI(t, nil, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%s: code %d: %s", c.file, code, stderr)
		}
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 8, zero_stage: 3}\n" + out
		s, err := scenarios.Load("imported.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatalf("%s: the printed section does not load: %v\n%s", c.file, err, out)
		}
		if int64(s.Model.Params) != c.total || s.Model.ActiveParams() != c.active {
			t.Errorf("%s: %d total, %d active; want %d, %d", c.file, s.Model.Params, s.Model.ActiveParams(), c.total, c.active)
		}
		// The printed layer list carries every dimension the import
		// records (shared_ffn, MLA's ranks…): the activation and FLOP
		// models read them, so the section must model what hf_config does.
		raw, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		hm, err := scenarios.ImportHF(c.file, raw)
		if c.mtp > 0 {
			hm, err = scenarios.ReadHFConfigMTP(c.file, c.mtp)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(hm.LayerList) != len(s.Model.LayerList) {
			t.Fatalf("%s: %d units printed, %d imported", c.file, len(s.Model.LayerList), len(hm.LayerList))
		}
		for i, l := range hm.LayerList {
			got := s.Model.LayerList[i].Dims
			if (l.Dims == nil) != (got == nil) || (got != nil && *got != *l.Dims) {
				t.Errorf("%s: %s dims printed as %+v, imported %+v", c.file, l.Name, got, l.Dims)
			}
		}
		// So does the head's softcap (Gemma 2: final_logit_softcapping).
		if s.Model.LogitSoftcap != hm.LogitSoftcap {
			t.Errorf("%s: logit_softcap printed %v, imported %v", c.file, s.Model.LogitSoftcap, hm.LogitSoftcap)
		}
		if n := strings.Count(out, "\n# note: "); n != c.notes {
			t.Errorf("%s: %d note lines, want %d:\n%s", c.file, n, c.notes, out)
		}
		if want := fmt.Sprintf(", mtp_layers: %d}\n", c.mtp); c.mtp > 0 != strings.Contains(out, want) {
			t.Errorf("%s: the scenario line with mtp %d:\n%s", c.file, c.mtp, out)
		}
	}
	out, _, code := runValidateCLI(t, nil, "import", "hf", "--format", "json", "../../scenarios/testdata/hf/qwen3-8b/config.json")
	var j struct {
		Notes  []string `json:"notes"`
		Params int64    `json:"params"`
		Layers []struct {
			Params int64 `json:"params"`
		} `json:"layer_list"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 || j.Params != 8_190_735_360 || len(j.Layers) != 36+3 || j.Notes != nil {
		t.Errorf("json: %v, code %d, %d params in %d layers, notes %q", err, code, j.Params, len(j.Layers), j.Notes)
	}
	// The JSON carries the norms and softcaps memory counts: Gemma 2 9B's
	// four fp32 norms, attention softcap and final logit softcap.
	out, _, code = runValidateCLI(t, nil, "import", "hf", "--format", "json", "../../scenarios/testdata/hf/gemma-2-9b/config.json")
	var g struct {
		LogitSoftcap bool `json:"logit_softcap"`
		Dims         struct {
			Norms       string `json:"norms"`
			AttnSoftcap bool   `json:"attn_softcap"`
		} `json:"dims"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || code != 0 || !g.LogitSoftcap || g.Dims.Norms != "gemma" || !g.Dims.AttnSoftcap {
		t.Errorf("gemma-2-9b json: %v, code %d, %+v", err, code, g)
	}
	out, _, code = runValidateCLI(t, nil, "import", "hf", "--format", "json", "../../scenarios/testdata/hf-extra/gpt-oss-20b.json")
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 || len(j.Notes) != 3 || !strings.Contains(j.Notes[1], "sliding window of 128 tokens") || !strings.HasPrefix(j.Notes[2], "keys not read: experts_per_token, initial_context_length, swiglu_limit (") {
		t.Errorf("json: %v, code %d, notes %q", err, code, j.Notes)
	}
	// The JSON carries each block's window: gpt-oss-20b's 12 even layers
	// (layer_types) slide over 128 tokens.
	var w struct {
		Layers []struct {
			Dims *struct {
				Window int64 `json:"window"`
			} `json:"dims"`
		} `json:"layer_list"`
	}
	windowed := 0
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatal(err)
	}
	for _, l := range w.Layers {
		if l.Dims != nil && l.Dims.Window == 128 {
			windowed++
		}
	}
	if windowed != 12 {
		t.Errorf("json: %d blocks with window 128, want 12", windowed)
	}
	_, stderr, code := runValidateCLI(t, nil, "import", "hf", "../../scenarios/testdata/hf/counts.json")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "not a JSON object") {
		t.Errorf("bad file: code %d, %q", code, stderr)
	}
}

// TestRunImported: zerosim run works on scenarios that import
// Llama-3.1-70B, Mixtral-8x7B (expert parallel) and Qwen2.5-72B from their
// config.json files, and names the model with its published total.
func TestRunImported(t *testing.T) {
	// Each file's warnings, in order: Mixtral's and Qwen2.5's files give no
	// seq_len, which is said (zerosim's default 4,096); Mixtral's ep 8 says
	// what its experts assume (scenarios' epNote).
	const seqNote = ":5:9: model.seq_len is not given: the model trains at zerosim's default 4,096 tokens"
	const epNote = ":6:38: ep=8: the experts' all-to-alls and GEMMs assume balanced, dropless routing"
	for _, c := range []struct {
		file, model string
		warnings    []string
	}{
		{"llama-3.1-70b", "transformer (LlamaForCausalLM), 70,553,706,496 params (83 layers/units)", nil},
		{"mixtral-8x7b", "transformer (MixtralForCausalLM), 46,702,792,704 params, 12,879,925,248 active per token incl. the input embedding (67 layers/units)", []string{seqNote, epNote}},
		{"qwen2.5-72b", "transformer (Qwen2ForCausalLM), 72,706,203,648 params (83 layers/units)", []string{seqNote}},
	} {
		out, stderr, code := runValidateCLI(t, nil, "run", "../../docs/examples/"+c.file+".yaml")
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		ok := code == 0 && (len(c.warnings) == 0) == (stderr == "")
		for i, w := range c.warnings {
			ok = ok && len(lines) == len(c.warnings) && strings.HasPrefix(lines[i], "zerosim: warning: ../../docs/examples/"+c.file+".yaml"+w)
		}
		if !ok {
			t.Fatalf("%s: code %d: %s", c.file, code, stderr)
		}
		if !strings.Contains(out, "model:               "+c.model+"\n") || !strings.Contains(out, "\nfits in GPU memory:  yes: ") {
			t.Errorf("%s: output lacks the model line %q or does not fit:\n%s", c.file, c.model, out)
		}
		if strings.Contains(c.file, "mixtral") != strings.Contains(out, "forward all-to-all") {
			t.Errorf("%s: all-to-all rows wrong:\n%s", c.file, out)
		}
	}
}

// TestImportTorchtitanCLI: torchtitan's llama3_8b.toml imported for 16
// nodes of H100s runs as printed (the brief's "import > s.yaml && run
// s.yaml"), with the file's 1 × 8,192-token micro-batch on dp 128; its
// llama3_70b.toml (8-way TP), a malformed file and deepseek_v3_16b.toml of
// cd337db (float8.moe_fqns, which no key dates before torchtitan eadca48
// refused it) are one line on stderr naming file:line:column, exit code 2;
// that key in the file of b5b7ffb, whose torchtitan ignored it, is one
// warning line, exit code 0.
func TestImportTorchtitanCLI(t *testing.T) {
	const dir = "../../scenarios/testdata/torchtitan/"
	out, stderr, code := runValidateCLI(t, nil, "import", "torchtitan", dir+"llama3_8b.toml", "--nodes", "16", "--gpu", "H100-80GB")
	if code != 0 || stderr != "" || !strings.HasPrefix(out, "# Imported by zerosim import torchtitan from "+dir+"llama3_8b.toml\n") {
		t.Fatalf("import: code %d: %s\n%s", code, stderr, out)
	}
	s := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(s, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	run, stderr, code := runValidateCLI(t, nil, "run", s)
	for _, want := range []string{"model:               transformer, 8,030,261,248 params (35 layers/units)\n",
		"cluster:             16 nodes × 8 H100-80GB", "ZeRO stage:          3\n",
		"(1,048,576 tokens per step: micro-batch 1 × 1 accumulation × dp 128 × 8,192 tokens)"} {
		if code != 0 || !strings.Contains(run, want) {
			t.Errorf("run: code %d, no %q: %s\n%s", code, want, stderr, run)
		}
	}
	// torchtitan's deepseek_v3_16b.toml of b5b7ffb gives float8.moe_fqns,
	// which the torchtitan of its keys ignored: one warning line at the
	// key on stderr, the scenario on stdout, exit 0.
	const ds = dir + "deepseek_v3_16b-b5b7ffb.toml"
	out, stderr, code = runValidateCLI(t, nil, "import", "torchtitan", ds, "--nodes", "2", "--gpu", "H100-80GB")
	if want := "zerosim: warning: " + ds + ":71:1: float8.moe_fqns is not a torchtitan job config key: ignored, as the file's torchtitan ignored it (training.compile, "; code != 0 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) || !strings.HasPrefix(out, "# Imported by zerosim import torchtitan from "+ds+"\n") {
		t.Errorf("%s: code %d, stderr %q, want one line starting %q\n%s", ds, code, stderr, want, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[training]\nseq_len = 8192\nlocal_batch_size = = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{dir + "llama3_70b.toml", "zerosim: " + dir + "llama3_70b.toml:41:1: parallelism.tensor_parallel_degree = 8: tensor parallelism is not modelled"},
		{bad, "zerosim: " + bad + ":3:20: not valid TOML: "},
		{dir + "deepseek_v3_16b-cd337db.toml", "zerosim: " + dir + "deepseek_v3_16b-cd337db.toml:75:1: float8.moe_fqns is not a torchtitan job config key (remove it or fix its spelling; torchtitan refuses unknown keys"},
	} {
		_, stderr, code = runValidateCLI(t, nil, "import", "torchtitan", c.file)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("%s: code %d, %q; want %q…", c.file, code, stderr, c.want)
		}
	}
}

// TestImportKind: `zerosim import FILE` without a command names the
// import that reads the file, from keys only that tool's config has (the
// real configs of each importer's tests); a file of no such kind, and a
// word that is not a file, keep the unknown-command line. Exit 2, one line.
func TestImportKind(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"../../scenarios/testdata/hf-extra/gpt-oss-20b.json", `it has a Hugging Face config's "architectures", so run: zerosim import hf ../../scenarios/testdata/hf-extra/gpt-oss-20b.json`},
		{"../../docs/examples/deepspeed/flagperf-llama2-7b.json", `it has DeepSpeed's "zero_optimization", so run: zerosim import deepspeed `},
		{"../../scenarios/testdata/torchtitan/llama3_8b.toml", "it is a TOML job config with a [model] table, so run: zerosim import torchtitan "},
		{"../../scenarios/testdata/accelerate/trl-fsdp2.yaml", `it has Accelerate's "distributed_type", so run: zerosim import accelerate `},
		{"../../scenarios/testdata/llmfoundry/mpt-7b.yaml", `it has llm-foundry's "device_train_microbatch_size", so run: zerosim import llm-foundry `},
		{"../../scenarios/testdata/megatron/train_gpt3_175b_distributed.sh", "it runs pretrain_gpt.py or passes --num-layers, so run: zerosim import megatron "},
		// A scenario, a document that quotes pretrain_gpt.py, not a file.
		{"../../docs/examples/mixtral-8x7b.yaml", `unknown command "../../docs/examples/mixtral-8x7b.yaml" (use accelerate, deepspeed, hf, llm-foundry, megatron, torchtitan`},
		{"../../README.md", `unknown command "../../README.md"`},
		{"nosuch", `unknown command "nosuch"`},
		// A ds_config.json saved with a UTF-8 byte-order mark (DeepSpeed
		// skips it): it said "unknown command" (QA17 L7).
		{bomFile(t, "../../docs/examples/deepspeed/flagperf-llama2-7b.json"), `it has DeepSpeed's "zero_optimization", so run: zerosim import deepspeed `},
	} {
		out, stderr, code := runValidateCLI(t, nil, "import", c.file)
		if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("import %s: code %d, stdout %q, stderr %q; want one line with %q", c.file, code, out, stderr, c.want)
		}
	}
}

// bomFile is a copy of file with a UTF-8 byte-order mark in front, in a
// temporary directory.
func bomFile(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(p, append([]byte("\xef\xbb\xbf"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImportHFRoundTripAll: for every Hugging Face config in the
// repository (testdata/hf, testdata/hf-extra and the hfpresets the
// hf_preset key reads), the section `import hf` prints, pasted into a
// scenario, loads (checkLayerDims accepts every dims the importer prints)
// to the importer's own parameter total and the same per-layer dims.
func TestImportHFRoundTripAll(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../scenarios/testdata/hf/*/config.json", "../../scenarios/testdata/hf-extra/*.json", "../../scenarios/hfpresets/*.json"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 60 {
		t.Fatalf("%d configs found; the glob patterns no longer match the testdata", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hm, err := scenarios.ImportHF(f, raw)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		out, stderr, code := runValidateCLI(t, nil, "import", "hf", f)
		if code != 0 || stderr != "" {
			t.Errorf("%s: code %d: %s", f, code, stderr)
			continue
		}
		doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nparallelism: {dp: 8, zero_stage: 3}\n" + out
		s, err := scenarios.Load("imported.yaml", []byte(doc), nil)
		if err != nil {
			t.Errorf("%s: the printed section does not load: %v", f, err)
			continue
		}
		if int64(s.Model.Params) != hm.Total || s.Model.ActiveParams() != hm.Active {
			t.Errorf("%s: loads %d total, %d active; imported %d, %d", f, s.Model.Params, s.Model.ActiveParams(), hm.Total, hm.Active)
		}
		if len(s.Model.LayerList) != len(hm.LayerList) {
			t.Errorf("%s: %d layers loaded, %d imported", f, len(s.Model.LayerList), len(hm.LayerList))
			continue
		}
		for i, l := range hm.LayerList {
			got := s.Model.LayerList[i].Dims
			if (l.Dims == nil) != (got == nil) || (got != nil && *got != *l.Dims) {
				t.Errorf("%s: %s dims printed as %+v, imported %+v", f, l.Name, got, l.Dims)
			}
		}
		// The block layout the compute and activation models take: the
		// printed section named none, so every import ran as gpt.
		if got, want := memory.BlockStyle(&s.Model), scenarios.HFBlockArch(hm.Architecture); got != want {
			t.Errorf("%s: the printed section replays as %s blocks, model.hf_config as %s", f, got, want)
		}
	}
}

// TestImportTorchtitanMoEArch: torchtitan's MoE flavors print their model
// as import hf does (layer list with dims) and named no arch either, so
// they replayed as gpt blocks; they are llama-style decoders.
func TestImportTorchtitanMoEArch(t *testing.T) {
	for _, toml := range []string{"deepseek_v3_16b.toml", "gpt_oss_debug.toml"} {
		out, stderr, code := runValidateCLI(t, nil, "import", "torchtitan", "../../scenarios/testdata/torchtitan/"+toml, "--nodes", "1", "--gpu", "H100-80GB")
		if code != 0 {
			t.Fatalf("%s: code %d: %s", toml, code, stderr)
		}
		s, err := scenarios.Load("tt.yaml", []byte(out), nil)
		if err != nil {
			t.Fatalf("%s: %v", toml, err)
		}
		if got := memory.BlockStyle(&s.Model); got != "llama" {
			t.Errorf("%s: replays as %s blocks, want llama", toml, got)
		}
	}
}

// TestImportHFReplaysAsConfig: the model section `zerosim import hf`
// prints replays as model.hf_config does. It named no model.arch, so
// Llama 2 7B from its config.json, pasted into the default example, took
// 316.896ms a step (MFU 61.3 % at an efficiency of 0.8, with attention at
// 0.35) against 418.15ms for the same file as hf_config: a two-matmul GeLU
// MLP in place of the gated one, and gpt activations.
func TestImportHFReplaysAsConfig(t *testing.T) {
	def, _ := scenarios.Example("default")
	for _, cfg := range []string{"llama-2-7b", "gpt2", "mixtral-8x7b"} {
		f := "../../scenarios/testdata/hf/" + cfg + "/config.json"
		printed, stderr, code := runValidateCLI(t, nil, "import", "hf", f)
		if code != 0 {
			t.Fatalf("%s: code %d: %s", f, code, stderr)
		}
		var section []string
		for _, l := range strings.SplitAfter(printed, "\n") {
			if !strings.HasPrefix(l, "#") {
				section = append(section, l)
			}
		}
		// The default example with its model section replaced.
		doc := string(def)
		i, j := strings.Index(doc, "\nmodel:\n"), strings.Index(doc, "\nparallelism:\n")
		doc = doc[:i+1] + strings.Join(section, "") + doc[j:]
		pasted, err := scenarios.Load("default.yaml", []byte(doc), nil)
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		viaConfig, err := scenarios.Load("default.yaml", def, []string{"model={hf_config: " + f + "}"})
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		a, err := zero.Replay(pasted, zero.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := zero.Replay(viaConfig, zero.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pa, _ := a.Peak()
		pb, _ := b.Peak()
		if a.StepTime != b.StepTime || a.Compute != b.Compute || pa != pb {
			t.Errorf("%s: printed section steps %v (compute %v, peak %d B), hf_config %v (compute %v, peak %d B)",
				cfg, a.StepTime, a.Compute, pa, b.StepTime, b.Compute, pb)
		}
	}
}

// TestImportOtherFramework: each importer given a file another importer
// reads names that importer and the command to run, not a fix for a file
// that is not wrong (QA2 finding 10: import hf of a ds_config said
// "architectures is missing"); an empty torchtitan job config says it is
// empty, not that the default flavor "debugmodel" is not a llama3 one.
func TestImportOtherFramework(t *testing.T) {
	ds := "../../docs/examples/deepspeed/flagperf-llama2-7b.json" // "zero_optimization"
	hf := "../../scenarios/testdata/hf/qwen3-8b/config.json"      // "architectures"
	toml := "../../scenarios/testdata/torchtitan/llama3_8b.toml"  // [model]
	acc := "../../scenarios/testdata/accelerate/alignment-handbook-fsdp.yaml"
	empty := filepath.Join(t.TempDir(), "empty.toml")
	if err := os.WriteFile(empty, []byte("\n  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hf", ds}, ds + `: not a Hugging Face config.json: it has DeepSpeed's "zero_optimization", so run: zerosim import deepspeed ` + ds},
		{[]string{"deepspeed", hf}, hf + `: not a DeepSpeed config: it has a Hugging Face config's "architectures", so run: zerosim import hf ` + hf},
		{[]string{"accelerate", ds}, ds + `: not an Accelerate config: it has DeepSpeed's "zero_optimization", so run: zerosim import deepspeed ` + ds},
		{[]string{"megatron", toml}, toml + ": not a Megatron-LM launch script or arguments: it is a TOML job config with a [model] table, so run: zerosim import torchtitan " + toml},
		{[]string{"llm-foundry", acc}, acc + `: not an llm-foundry train YAML: it has Accelerate's "`},
		{[]string{"torchtitan", empty}, empty + ": empty file (give a torchtitan job config .toml"},
	} {
		out, errOut, code := runCLI(append([]string{"import"}, c.args...)...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestImportHFMTPLayersRefused (QA8 F1): --mtp-layers on a model without
// a multi-token-prediction module, or out of range, is one line naming the
// flag, exit code 2, nothing on stdout.
func TestImportHFMTPLayersRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"../../scenarios/testdata/hf-extra/llama-3.1-70b.json", "--mtp-layers", "1"}, "zerosim: --mtp-layers 1: ../../scenarios/testdata/hf-extra/llama-3.1-70b.json: LlamaForCausalLM has no multi-token-prediction module zerosim builds"},
		{[]string{"../../scenarios/testdata/hf-extra/deepseek-v3.json", "--mtp-layers", "-1"}, "zerosim: --mtp-layers -1 is out of range (use 0 to 1024)"},
	} {
		out, stderr, code := runValidateCLI(t, nil, append([]string{"import", "hf"}, c.args...)...)
		if code != 2 || out != "" || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want %q", c.args, code, out, stderr, c.want)
		}
	}
}
