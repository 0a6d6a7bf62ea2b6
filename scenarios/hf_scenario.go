package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zerosim/zerosim/units"
)

// ArchHF marks a model imported from a Hugging Face config.json (a preset
// built from one, or model.hf_config): its layer list carries per-block
// dimensions (Layer.Dims) instead of following the gpt or llama layout.
const ArchHF = "hf"

// HFBlockArch is the block layout of a Hugging Face architecture as
// zerosim's compute and activation models take it: GPT-2, OPT, GPT-NeoX
// and Falcon decoders are "gpt" (LayerNorm, a two-matmul GeLU MLP), every
// other class the importer reads (Llama, Mistral, Mixtral, Qwen, Gemma,
// Phi-3, DeepSeek, …) is "llama" (RMSNorm, a gated three-matmul MLP; the
// hfLlamaLike family of hf.go). An imported model printed with its layer
// list (zerosim import hf) names it as model.arch, since without it a
// transformer's layout is gpt.
func HFBlockArch(architecture string) string {
	switch architecture {
	case "GPT2LMHeadModel", "OPTForCausalLM", "GPTNeoXForCausalLM", "FalconForCausalLM":
		return ArchGPT
	}
	return ArchLlama
}

// HFEagerSoftmaxFP32 reports whether transformers' eager attention for
// the class keeps its softmax in fp32 (the activation model's
// memory.BlockDims.SoftmaxFP32). The Llama-style decoders share Llama's
// eager_attention_forward, softmax(attn_weights, dim=-1,
// dtype=torch.float32).to(query.dtype) ("upcast attention to fp32":
// models/llama/modeling_llama.py @ 002272831fba, modeling_qwen3.py
// @ 000c33fdfde12e1ffafbfcdb3c926df5727a00b6, modeling_gemma2.py
// @ 006e86931247d7bacf94ad00ada1fb6baf11e94b, modeling_gemma3.py
// @ 0018aa647bb13801f061e2d1027c326f531b59fb, modeling_olmo2.py
// @ 7264638d7b0ab5841670813ebed806189b8f7b71, and their copies). The
// others keep the softmax in the scores' 16-bit dtype: GPT-2's _attn
// (softmax(attn_weights, dim=-1), then .type(value.dtype):
// modeling_gpt2.py @ c44b2d9976e8eafbdcb89cb2710141b2bc9b138f, without
// reorder_and_upcast_attn), GPT-NeoX's _attn (modeling_gpt_neox.py
// @ 203bf6f1c524062b3c109da5ff67e61f483407e7), OPT's (upcast only from
// fp16, PR #17437), Falcon's (softmax(…, dtype=hidden_states.dtype)) and
// gpt-oss's, whose eager path takes the softmax over the logits and sinks
// in their own dtype (softmax(combined_logits, dim=-1,
// dtype=combined_logits.dtype)). A class the importer does not know
// ("" for a model without hf_config) is not transformers' eager code.
func HFEagerSoftmaxFP32(architecture string) bool {
	if _, ok := hfArchitectures[architecture]; !ok {
		return false
	}
	switch architecture {
	case "GPT2LMHeadModel", "OPTForCausalLM", "GPTNeoXForCausalLM", "FalconForCausalLM", "GptOssForCausalLM":
		return false
	}
	return true
}

// HFModelHead is the head of the model: section an importer prints for an
// imported model with its layer list: kind, the block layout (HFBlockArch)
// and the config's class as model.architecture, so that the scenario
// resolves to the model model.hf_config gives (run's header names the
// class either way).
func HFModelHead(hm *HFModel) string {
	s := fmt.Sprintf("model:\n  kind: transformer\n  arch: %s  # %s's block layout, as model.hf_config replays it\n  architecture: %s\n",
		HFBlockArch(hm.Architecture), hm.Architecture, hm.Architecture)
	if hm.LogitSoftcap {
		s += "  logit_softcap: true  # final_logit_softcapping: tanh over the logits keeps its output\n"
	}
	return s
}

// DefaultHFSeqLen is the training sequence length of an imported model when
// the scenario gives no model.seq_len (capped at max_position_embeddings):
// config.json states the longest context the model supports, not the
// length it is trained at.
const DefaultHFSeqLen = 4096

// SeqLen is the sequence length a scenario trains the model at when it
// gives no model.seq_len: DefaultHFSeqLen, capped at
// max_position_embeddings.
func (hm *HFModel) SeqLen() int64 {
	if hm.MaxPositions > 0 {
		return min(DefaultHFSeqLen, hm.MaxPositions)
	}
	return DefaultHFSeqLen
}

// SeqLenSource says where SeqLen comes from, for the comment an import
// writes beside model.seq_len and the warning a scenario that gives no
// model.seq_len gets: zerosim's default (DefaultHFSeqLen, in tokens, not
// by its Go name), and max_position_embeddings when that differs (it caps
// the default, or is the longest context rather than the training length).
func (hm *HFModel) SeqLenSource() string {
	s := fmt.Sprintf("zerosim's default %s tokens for an imported model: config.json states the longest context, not the training length", commas(DefaultHFSeqLen))
	switch {
	case hm.MaxPositions > 0 && hm.MaxPositions < DefaultHFSeqLen:
		s = fmt.Sprintf("zerosim's default %s tokens for an imported model, capped at config.json's max_position_embeddings %d", commas(DefaultHFSeqLen), hm.MaxPositions)
	case hm.MaxPositions > DefaultHFSeqLen:
		s += fmt.Sprintf(" (max_position_embeddings %d)", hm.MaxPositions)
	}
	return s
}

// FFN is the model's model.ffn: the dense MLP's intermediate size, else
// (every block MoE) the experts'.
func (hm *HFModel) FFN() int64 {
	if hm.Dims.FFN == 0 {
		return hm.Dims.ExpertFFN
	}
	return hm.Dims.FFN
}

// hfPresetFS holds config.json-equivalents of the model presets built
// through the importer (architecture keys as published on the Hugging Face
// Hub; see docs/scenario-format.md).
//
//go:embed hfpresets/*.json
var hfPresetFS embed.FS

// hfPreset returns the imported model of preset name, if it is built from a
// config.json.
func hfPreset(name string) (*HFModel, bool) {
	hm, err := hfPresetLayers(name, 0)
	if err != nil {
		panic("scenarios: preset " + name + ": " + err.Error()) // the presets are tested
	}
	return hm, hm != nil
}

// hfPresetLayers imports preset name with num_hidden_layers overridden
// when layers > 0; nil when name is not an hf preset.
func hfPresetLayers(name string, layers int64) (*HFModel, error) {
	b, err := hfPresetFS.ReadFile("hfpresets/" + name + ".json")
	if err != nil {
		return nil, nil
	}
	m, err := parseHF(name+".json", b)
	if err != nil {
		return nil, err
	}
	return importHF(name+".json", b, m, layers, -1)
}

// hfKeysExclusive are the model keys an imported model defines itself
// (layers may override num_hidden_layers, as zerosim fit does to scale a
// model).
var hfKeysExclusive = []string{"preset", "kind", "arch", "params", "hidden", "ffn", "heads", "kv_heads", "vocab", "largest_layer", "layer_list", "logit_softcap"}

// resolveHFConfig imports model.hf_config, relative to the scenario file.
func (l *loader) resolveHFConfig(s *Scenario) *Error {
	m := &s.Model
	for _, k := range hfKeysExclusive {
		if l.has("model." + k) {
			return l.errPath("model."+k, fmt.Sprintf("model.%s conflicts with hf_config, which defines the model (delete %s; layers, seq_len and groups may stay)", k, k))
		}
	}
	if len(l.replacedModel) > 0 && l.has("model.layers") && !l.bySet("model.layers") {
		// --set model.hf_config=… replaced the file's model (replaces),
		// but the file's layers were given for that model: keep them or
		// not, the user says which.
		return l.errPath("model.layers", fmt.Sprintf("--set model.hf_config replaced the file's model.%s, but model.layers=%d was given for it: "+
			"to keep %d layers add --set model.layers=%d, to take the config.json's depth replace the whole model, --set 'model={hf_config: %s}'",
			l.replacedModel[0], m.Layers, m.Layers, m.Layers, m.HFConfig))
	}
	if strings.TrimSpace(m.HFConfig) == "" {
		return l.errPath("model.hf_config", "hf_config is empty (give the path of a config.json, relative to this file)")
	}
	path := m.HFConfig
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(l.file), path)
	}
	layers, lerr := l.hfLayers(m)
	if lerr != nil {
		return lerr
	}
	mtp := int64(-1)
	if l.has("model.mtp_layers") {
		if err := l.intRange("model.mtp_layers", m.MTPLayers); err != nil {
			return err
		}
		mtp = m.MTPLayers
	}
	hm, data, err := readHFConfig(path, layers, mtp)
	if u := (*MTPUnusedError)(nil); errors.As(err, &u) {
		return l.errPath("model.mtp_layers", fmt.Sprintf("mtp_layers=%d: %s: %s: delete mtp_layers", m.MTPLayers, m.HFConfig, u.Error()))
	}
	if err != nil {
		msg := oneLine(err.Error())
		if _, serr := os.Stat(path); serr != nil && l.file == Stdin && !filepath.IsAbs(m.HFConfig) {
			// A scenario on standard input has no directory: the path
			// was read from the working directory (QA F20).
			wd, werr := os.Getwd()
			if werr != nil {
				wd = "."
			}
			msg = strings.TrimSuffix(msg, " (check the path)") + fmt.Sprintf(" (the scenario came from standard input, so the relative path was read from the working directory, %s: give the path from there or an absolute one, or give the scenario's file instead of -)", ttName(wd))
		} else if hint := l.fromScenarioDir(m.HFConfig); hint != "" && serr != nil {
			msg = strings.TrimSuffix(msg, " (check the path)") + hint
		}
		if _, serr := os.Stat(path); serr != nil || hfFileError(path, err) {
			// No file there, or one that is wrong whatever the other
			// keys hold (QA25 H2).
			return l.errAlone("model.hf_config", "hf_config: "+msg)
		}
		return l.errPath("model.hf_config", "hf_config: "+msg)
	}
	s.readFile("model.hf_config", m.HFConfig, path, data)
	return l.applyHF(s, hm)
}

// hfFileError reports whether err, readHFConfig's error for the
// config.json at path, is the file's alone: it cannot be read or is not
// JSON, or importing it fails alike with one layer and no MTP modules, so
// that neither model.layers nor model.mtp_layers (the keys readHFConfig
// takes) gave it.
func hfFileError(path string, err error) bool {
	data, rerr := readHFFile(path)
	if rerr != nil {
		return true
	}
	m, perr := parseHF(path, data)
	if perr != nil {
		return true
	}
	_, ierr := importHF(path, data, m, 1, -1)
	return ierr != nil && ierr.Error() == err.Error()
}

// hfLayers is model.layers when given (it overrides num_hidden_layers),
// else 0.
func (l *loader) hfLayers(m *Model) (int64, *Error) {
	if !l.has("model.layers") {
		return 0, nil
	}
	return m.Layers, l.intRange("model.layers", m.Layers)
}

// applyHF makes m the imported model: its layer list, the dimensions of its
// first block for the activation model, and the expert group.
func (l *loader) applyHF(s *Scenario, hm *HFModel) *Error {
	m := &s.Model
	at := len(s.Warnings)
	m.Kind, m.Arch = KindTransformer, ArchHF
	m.Hidden, m.Layers, m.Heads, m.KVHeads, m.Vocab = hm.Dims.Hidden, hm.Layers, hm.Dims.Heads, hm.Dims.KVHeads, hm.Vocab
	m.FFN = hm.FFN()
	if !l.has("model.seq_len") {
		m.SeqLen = hm.SeqLen()
	}
	if err := l.intRange("model.seq_len", m.SeqLen); err != nil {
		return err
	}
	m.LayerList = append([]Layer(nil), hm.LayerList...)
	m.Params = units.Count(hm.Total)
	m.Architecture = hm.Architecture
	m.LogitSoftcap = hm.LogitSoftcap
	markBlocks(m)
	key := "model.preset"
	if l.has("model.hf_config") {
		key = "model.hf_config"
	}
	for i, n := range hm.Notes {
		if hm.routing != nil && i == hm.routing.at {
			n = hm.routing.note(s.Communication.MoEDispatcher)
		}
		l.warn(s, key, n)
	}
	if d := hm.DropoutNote(); d != "" && !l.has("training.dropout") {
		l.warn(s, key, d)
	}
	if note := l.warnHFSeqLen(s, hm); note != "" {
		s.seqLenNote, s.defaultSeqLen = note, m.SeqLen
	}
	if len(s.Warnings) > at {
		s.importNotes, s.importAt = append([]string(nil), s.Warnings[at:]...), at
	}
	return l.resolveGroups(s)
}

// ActiveParams is the parameters one token goes through: every layer's
// ActiveParams when set (the top-k routed experts), else its Params.
func (m *Model) ActiveParams() int64 {
	var t int64
	for _, l := range m.LayerList {
		if l.ActiveParams > 0 {
			t += int64(l.ActiveParams)
		} else {
			t += int64(l.Params)
		}
	}
	return t
}

// resolveHFPreset resolves a model preset built from a config.json.
func (l *loader) resolveHFPreset(s *Scenario, hm *HFModel) *Error {
	for _, k := range hfKeysExclusive[1:] {
		if l.has("model." + k) {
			return l.errPath("model."+k, fmt.Sprintf("model.%s cannot change preset %s, which is imported from its config.json (delete %s, or describe the model without preset)", k, s.Model.Preset, k))
		}
	}
	layers, lerr := l.hfLayers(&s.Model)
	if lerr != nil {
		return lerr
	}
	if layers > 0 {
		var err error
		if hm, err = hfPresetLayers(s.Model.Preset, layers); err != nil {
			return l.errPath("model.layers", oneLine(err.Error()))
		}
	}
	return l.applyHF(s, hm)
}
