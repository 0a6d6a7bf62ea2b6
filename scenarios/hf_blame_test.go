package scenarios

import (
	"strings"
	"testing"
)

// TestHFBlamesEditedKey: an error about config.json points at the key the
// user got wrong (qauser30 L4). Llama 3.1 70B's config with
// num_attention_heads edited 64 → 60 was blamed on num_key_value_heads=8,
// which was untouched: 60 does not divide hidden_size 8192 either, so the
// query heads are named, at their position, with the key-value heads'
// position beside them. With num_key_value_heads edited to 3 instead, the
// key-value heads are named. A whole float for an integer key
// (intermediate_size 2.8672e4, what json.load makes a Python float that
// nn.Linear refuses) is refused at its position, as 14336.5 was.
func TestHFBlamesEditedKey(t *testing.T) {
	const llama70 = "{\n" +
		` "architectures": ["LlamaForCausalLM"], "model_type": "llama",` + "\n" +
		` "hidden_size": 8192, "intermediate_size": 28672,` + "\n" +
		` "num_attention_heads": 64, "num_key_value_heads": 8,` + "\n" +
		` "num_hidden_layers": 80, "vocab_size": 128256, "max_position_embeddings": 131072` + "\n}"
	for _, c := range []struct{ name, from, to, want string }{
		{"heads 60", `"num_attention_heads": 64`, `"num_attention_heads": 60`,
			"c.json:4:2: num_attention_heads=60 is not a multiple of num_key_value_heads=8 (at 4:29) (change num_attention_heads to a multiple of 8 dividing hidden_size=8192, such as 64, or num_key_value_heads to a divisor of 60)"},
		{"kv heads 3", `"num_key_value_heads": 8`, `"num_key_value_heads": 3`,
			"c.json:4:29: num_key_value_heads=3 does not divide num_attention_heads=64 (at 4:2) (use a divisor of 64, or change num_attention_heads to a multiple of 3)"},
		{"ffn 2.8672e4", `"intermediate_size": 28672`, `"intermediate_size": 2.8672e4`,
			"c.json:3:23: intermediate_size=2.8672e4 is a float, where transformers builds the model from an integer (nn.Linear and range() refuse a float; write 28672)"},
		{"layers 80.0", `"num_hidden_layers": 80`, `"num_hidden_layers": 80.0`,
			"c.json:5:2: num_hidden_layers=80.0 is a float, where transformers builds the model from an integer (nn.Linear and range() refuse a float; write 80)"},
		{"ffn 14336.5", `"intermediate_size": 28672`, `"intermediate_size": 14336.5`,
			"c.json:3:23: intermediate_size=14336.5 is not a whole number (use 14336 or 14337, the nearest whole numbers)"},
	} {
		doc := strings.Replace(llama70, c.from, c.to, 1)
		if _, err := ImportHF("c.json", []byte(doc)); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
	// As published: untied embedding and lm_head V·h, 80 blocks of q and o
	// h², k and v h·kv (8 heads of 128), gate/up/down 3·h·f and two RMSNorms,
	// a final norm: 70,553,706,496, Llama 3.1 70B's count.
	const h, kv, f, v, layers = 8192, 8 * 128, 28672, 128256, 80
	const want = 2*v*h + layers*(2*h*h+2*h*kv+3*h*f+2*h) + h
	if hm, err := ImportHF("c.json", []byte(llama70)); err != nil || hm.Total != want {
		t.Errorf("as published: %v, %v; want %d parameters", hm, err, want)
	}
}

// TestNearestMultipleDividing: the suggestion in kvHeads' message is the
// multiple of the key-value heads nearest the query heads that divides
// hidden_size, the smaller at a tie (its doc comment). 60 heads over 8 KV
// heads and hidden 4,480 = 2⁷·5·7: 56 (= 8·7, 4,480/56 = 80) and 64
// (4,480/64 = 70) both divide it, each 4 from 60: 56. Hidden 4,096: 64
// (56 does not divide it). No hidden size: none.
func TestNearestMultipleDividing(t *testing.T) {
	for _, c := range []struct{ heads, step, hidden, want int64 }{
		{60, 8, 4480, 56},
		{60, 8, 4096, 64},
		{60, 8, 0, 0},
	} {
		if got := nearestMultipleDividing(c.heads, c.step, c.hidden); got != c.want {
			t.Errorf("nearestMultipleDividing(%d, %d, %d) = %d, want %d", c.heads, c.step, c.hidden, got, c.want)
		}
	}
}
