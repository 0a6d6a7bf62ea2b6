package scenarios

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestHFUnreadKeys: a config.json key the import neither reads nor knows
// to be inert is named in a note, never dropped silently (QA34 M4), and a
// key one edit from a key the import reads, which the file lacks, is
// refused at its position: Llama 3.1 8B with num_key_value_head (its 8
// kv heads' key misspelt) would import as multi-head attention,
// 8,030,261,248 + 32 layers × 2 × 4,096 × (4,096 − 1,024) = 8,835,567,616
// parameters, the count transformers builds from that file.
func TestHFUnreadKeys(t *testing.T) {
	read := func(name string) string {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	llama := read("testdata/hf/llama-3.1-8b/config.json")
	at := func(doc, key string) string { // "LINE:COL" of key's opening quote, 1-based
		i := strings.Index(doc, `"`+key+`"`)
		line := strings.Count(doc[:i], "\n") + 1
		col := i - strings.LastIndex(doc[:i], "\n")
		return strconv.Itoa(line) + ":" + strconv.Itoa(col)
	}
	// The file as published: every key read or inert.
	hm, err := ImportHF("l.json", []byte(llama))
	if err != nil || len(hm.Unread) != 0 || hm.UnreadNote() != "" {
		t.Fatalf("Llama 3.1 8B as published: %v, unread %q", err, hm.Unread)
	}
	// The misspelt key alone: refused where it stands.
	typo := strings.Replace(llama, `"num_key_value_heads"`, `"num_key_value_head"`, 1)
	_, err = ImportHF("l.json", []byte(typo))
	want := "l.json:" + at(typo, "num_key_value_head") + ": num_key_value_head is not a key zerosim's LlamaForCausalLM import reads (did you mean num_key_value_heads? transformers keeps an unknown key as an attribute and builds the model with num_key_value_heads's default: rename it to num_key_value_heads)"
	if err == nil || err.Error() != want {
		t.Errorf("misspelt kv heads:\n got %v\nwant %s", err, want)
	}
	// A trailing space is one edit too: refused at the quoted key, not
	// noted while the count takes 32 kv heads.
	typo = strings.Replace(llama, `"num_key_value_heads"`, `"num_key_value_heads "`, 1)
	_, err = ImportHF("l.json", []byte(typo))
	want = "l.json:" + at(typo, "num_key_value_heads ") + `: "num_key_value_heads " is not a key zerosim's LlamaForCausalLM import reads (did you mean num_key_value_heads?`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("kv heads with a trailing space:\n got %v\nwant %s…", err, want)
	}
	// Beside the real key: noted with the did-you-mean, the count the real key's.
	both := strings.Replace(llama, `"num_key_value_heads": 8,`, `"num_key_value_heads": 8, "num_key_value_head": 4,`, 1)
	hm, err = ImportHF("l.json", []byte(both))
	if err != nil || hm.Total != 8_030_261_248 || !reflect.DeepEqual(hm.Unread, []string{"num_key_value_head (did you mean num_key_value_heads? it is given too)"}) {
		t.Errorf("both spellings: %v, %d, %q", err, hm.Total, hm.Unread)
	}
	// MoE keys on a dense class: LlamaConfig does not define them, the
	// count stays Llama 3.1 8B's, and the note names them.
	moe := strings.Replace(llama, `"num_key_value_heads": 8,`, `"num_key_value_heads": 8, "num_experts_per_tok": 2, "num_experts": 8,`, 1)
	hm, err = ImportHF("l.json", []byte(moe))
	if err != nil || hm.Total != 8_030_261_248 || !reflect.DeepEqual(hm.Unread, []string{"num_experts", "num_experts_per_tok"}) ||
		!strings.HasPrefix(hm.UnreadNote(), "keys not read: num_experts, num_experts_per_tok (") {
		t.Errorf("experts on Llama: %v, %d, %q, %q", err, hm.Total, hm.Unread, hm.UnreadNote())
	}
	// Inert keys say nothing: a token id, a dtype, generation's.
	inert := strings.Replace(llama, `"num_key_value_heads": 8,`, `"num_key_value_heads": 8, "image_token_id": 7, "dtype": "bfloat16", "top_p": 0.9,`, 1)
	if hm, err = ImportHF("l.json", []byte(inert)); err != nil || len(hm.Unread) != 0 {
		t.Errorf("inert keys: %v, %q", err, hm.Unread)
	}
	// In a multimodal class's text_config: refused with the path.
	gemma := read("testdata/hf-extra/gemma-3-4b-it.json")
	typo = strings.Replace(gemma, `"num_key_value_heads"`, `"num_key_value_head"`, 1)
	_, err = ImportHF("g.json", []byte(typo))
	want = "g.json:" + at(typo, "num_key_value_head") + ": text_config.num_key_value_head is not a key zerosim's Gemma3ForConditionalGeneration import reads (did you mean num_key_value_heads?"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("misspelt text_config kv heads:\n got %v\nwant %s…", err, want)
	}
}

// TestHFAliases: a key and its attribute_map alias given together. An
// alias the import does not read is named (a GPT-2 config with an extra
// key its class does not define keeps it in the note), one equal to its
// field is read, and one that differs is refused at its position:
// transformers sets the class's fields first and the file's other keys
// after them, an alias onto its field (PreTrainedConfig.__post_init__ and
// __setattr__ at 008e5743; GPT2Config.attribute_map maps hidden_size onto
// n_embd, num_attention_heads onto n_head), so GPT-2 small's file with
// hidden_size 1024 beside n_embd 768 builds a 1024-wide model, not the
// 124,439,808 parameters of n_embd's 768.
func TestHFAliases(t *testing.T) {
	raw, err := os.ReadFile("testdata/hf/gpt2/config.json")
	if err != nil {
		t.Fatal(err)
	}
	with := func(extra string) string { return strings.Replace(string(raw), "{", "{"+extra, 1) }
	at := func(doc, key string) string {
		i := strings.Index(doc, `"`+key+`"`)
		return strconv.Itoa(strings.Count(doc[:i], "\n")+1) + ":" + strconv.Itoa(i-strings.LastIndex(doc[:i], "\n"))
	}
	for _, c := range []struct {
		name, doc, unread, err string
		heads                  int64
	}{
		{"as published", string(raw), "n_ctx", "", 12},
		{"an unknown key beside", with(`"n_heads": 16,`), "n_heads", "", 12},
		{"the alias, equal", with(`"num_attention_heads": 12,`), "", "", 12},
		{"the alias, 12.0", with(`"num_attention_heads": 12.0,`), "", "", 12},
		{"a null field, the alias", strings.Replace(string(raw), `"n_head": 12`, `"n_head": null, "num_attention_heads": 12`, 1), "", "", 12},
		{"the alias, 16", with(`"num_attention_heads": 16,`), "", "num_attention_heads=16 and n_head=12 are one setting in transformers (the config class's attribute_map), which sets num_attention_heads last, so the model gets 16 where the import reads n_head's 12 (give one of them, or both the same value)", 0},
		{"hidden_size 1024", with(`"hidden_size": 1024,`), "", "hidden_size=1024 and n_embd=768 are one setting", 0},
		{"the alias null", with(`"num_attention_heads": null,`), "", "num_attention_heads=null and n_head=12 are one setting", 0},
		// GPT2Config.attribute_map's other two pairs
		// (configuration_gpt2.py: num_hidden_layers onto n_layer,
		// max_position_embeddings onto n_positions): each checked.
		{"num_hidden_layers 24", with(`"num_hidden_layers": 24,`), "", "num_hidden_layers=24 and n_layer=12 are one setting", 0},
		{"max_position_embeddings 2048", with(`"max_position_embeddings": 2048,`), "", "max_position_embeddings=2048 and n_positions=1024 are one setting", 0},
	} {
		hm, err := ImportHF("g.json", []byte(c.doc))
		if c.err != "" {
			key, _, _ := strings.Cut(c.err, "=")
			if want := "g.json:" + at(c.doc, key) + ": " + c.err; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s: %v, want %s…", c.name, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		named := strings.Join(hm.Unread, ", ")
		if hm.Total != 124_439_808 || hm.Dims.Heads != c.heads || c.unread != "" && !strings.Contains(named, c.unread) || strings.Contains(named, "num_attention_heads") {
			t.Errorf("%s: %d parameters, %d heads, unread %q; want 124,439,808, %d heads and %q named", c.name, hm.Total, hm.Dims.Heads, named, c.heads, c.unread)
		}
	}
}
