package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Encode writes s as a scenario file: keys in field order, quantities in
// exact units (bytes, B/s, ps). For a resolved scenario this is the
// resolved scenario, presets expanded and --set applied: loading the bytes
// gives s again, so a report that carries them can be reproduced from the
// report alone. Only where a default came from is not in the bytes: they
// give training.compute_efficiency, so the scenario they load has it
// given, not Training.ComputeEfficiencyDefault.
func Encode(s *Scenario) ([]byte, error) {
	c := *s
	if c.Version == 0 {
		c.Version = 1
	}
	return yaml.Marshal(encodeScenario(&c))
}

// Replayable is s with each file it read (ReadFiles: model.hf_config,
// communication.calibration) named by the absolute path Load opened
// instead of the path relative to the scenario's directory: what
// result.json's resolved_scenario and report.html's resolved scenario
// write, so the saved scenario replays the step from any directory (the
// file must still be there; result.json's files[] has its SHA-256 to
// check it is the same). Digest does not depend on these paths, so the
// replay has the same digest.
func Replayable(s *Scenario) *Scenario {
	c := *s
	for _, f := range s.ReadFiles {
		if f.Opened == "" {
			continue
		}
		switch f.Key {
		case "model.hf_config":
			c.Model.HFConfig = f.Opened
		case "communication.calibration":
			c.Communication.Calibration = f.Opened
		}
	}
	return &c
}

// Digest is the SHA-256 (hex) of what a resolved scenario replays: its
// Encode bytes and, when it names a calibration file, the file's content
// as loaded (Encode keeps only the path). run prints its first 12 digits
// ("resolved: sha256 …"); sweep's meta line and plan.json carry it whole
// as scenario_sha256, so an edited config.json or calibration file under
// an unchanged scenario file is a different scenario to --resume and merge.
// Where the files are is not in it: the paths of model.hf_config (whose
// content is the layer list Encode writes) and of a loaded calibration are
// left out, so the same scenario read from another directory, or its
// Replayable form with absolute paths, has the same digest.
func Digest(s *Scenario) (string, error) {
	c := *s
	if len(c.Model.LayerList) > 0 {
		c.Model.HFConfig = ""
	}
	if c.Communication.CalibrationData != nil {
		c.Communication.Calibration = ""
	}
	data, err := Encode(&c)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(data)
	if c := s.Communication.CalibrationData; c != nil {
		cal, err := yaml.Marshal(c)
		if err != nil {
			return "", err
		}
		h.Write([]byte("\n---\n"))
		h.Write(cal)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// LayerListYAML is layers as a model.layer_list, one flow mapping per layer
// (name, params, group, active_params and the block's nonzero dims), each
// line indented for a model: section: what the importers print.
func LayerListYAML(layers []Layer) string {
	var b strings.Builder
	for _, l := range layers {
		fmt.Fprintf(&b, "    - {name: %s, params: %d", l.Name, int64(l.Params))
		if l.Group != "" {
			fmt.Fprintf(&b, ", group: %s", l.Group)
		}
		if l.ActiveParams > 0 {
			fmt.Fprintf(&b, ", active_params: %d", int64(l.ActiveParams))
		}
		if x := l.Dims; x != nil {
			var f []string
			for _, kv := range []struct {
				k string
				v int64
			}{{"hidden", x.Hidden}, {"heads", x.Heads}, {"kv_heads", x.KVHeads}, {"head_dim", x.HeadDim}, {"ffn", x.FFN},
				{"experts", x.Experts}, {"top_k", x.TopK}, {"expert_ffn", x.ExpertFFN}, {"shared_experts", x.SharedExperts},
				{"router_groups", x.RouterGroups}, {"router_group_topk", x.RouterGroupTopK}, {"shared_ffn", x.SharedFFN}, {"value_head_dim", x.ValueHeadDim}, {"rope_head_dim", x.RopeHeadDim},
				{"q_lora_rank", x.QLoRARank}, {"kv_lora_rank", x.KVLoRARank}, {"window", x.Window}, {"attention_chunk", x.AttentionChunk},
				{"linear_key_heads", x.LinearKeyHeads}, {"linear_value_heads", x.LinearValueHeads}, {"linear_key_head_dim", x.LinearKeyHeadDim},
				{"linear_value_head_dim", x.LinearValueHeadDim}, {"linear_conv_kernel", x.LinearConvKernel}} {
				if kv.v != 0 {
					f = append(f, fmt.Sprintf("%s: %d", kv.k, kv.v))
				}
			}
			if x.SharedGate {
				f = append(f, "shared_gate: true")
			}
			if x.Router != "" {
				f = append(f, "router: "+x.Router)
			}
			if x.RouterNorm {
				f = append(f, "router_norm: true")
			}
			if x.MTP {
				f = append(f, "mtp: true")
			}
			if x.OutputGate {
				f = append(f, "output_gate: true")
			}
			if x.LinearAttention != "" {
				f = append(f, "linear_attention: "+x.LinearAttention)
			}
			if x.QKNorm != "" {
				f = append(f, "qk_norm: "+x.QKNorm)
			}
			if x.Norms != "" {
				f = append(f, "norms: "+x.Norms)
			}
			if x.AttnSoftcap {
				f = append(f, "attn_softcap: true")
			}
			for _, b := range []struct {
				k  string
				on bool
			}{{"qkv_bias", x.QKVBias}, {"o_bias", x.OBias}, {"mlp_bias", x.MLPBias}} {
				if b.on {
					f = append(f, b.k+": true")
				}
			}
			fmt.Fprintf(&b, ", dims: {%s}", strings.Join(f, ", "))
		}
		b.WriteString("}\n")
	}
	return b.String()
}
