package scenarios

import (
	"strings"
	"testing"
)

// TestImportErrorPositions: the DeepSpeed and Hugging Face importers name
// the offending key's FILE:LINE:COL as the other importers do (QA2 finding
// 12: "fp16.enabled and bf16.enabled are both true", the train_batch_size
// mismatch and "X is missing" named the file alone). A key the file lacks
// points at the object it belongs in (the top-level object for a
// top-level key); a message about a flag, not a key, names the file alone.
// Lines and columns counted by hand; columns are characters from 1, at the
// key's opening quote.
func TestImportErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ds       bool
		o        DeepSpeedOptions
		want     string
	}{
		{"both precisions", "{\n  \"bf16\": {\"enabled\": true},\n  \"fp16\": {\"enabled\": true},\n  \"train_micro_batch_size_per_gpu\": 2\n}", true, DeepSpeedOptions{},
			"c.json:3:12: fp16.enabled and bf16.enabled are both true"},
		{"batch mismatch", "{\"train_micro_batch_size_per_gpu\": 4,\n \"gradient_accumulation_steps\": 8,\n \"train_batch_size\": 1000}", true, DeepSpeedOptions{DP: 16},
			"c.json:3:2: train_batch_size=1000 is not train_micro_batch_size_per_gpu·gradient_accumulation_steps·dp = 4·8·16"},
		{"top-level key missing", "\n  {\"zero_optimization\": {\"stage\": 2}}", true, DeepSpeedOptions{},
			"c.json:2:3: train_micro_batch_size_per_gpu is missing"},
		{"nested key", "{\"train_micro_batch_size_per_gpu\": 1,\n \"zero_optimization\": {\n   \"stage\": 5}}", true, DeepSpeedOptions{},
			"c.json:3:4: zero_optimization.stage=5 is out of range"},
		{"flag, not a key", "{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true}}", true, DeepSpeedOptions{ParamDType: FP16},
			"c.json: --dtype fp16 contradicts"},
		{"hf missing", "{\"architectures\": [\"LlamaForCausalLM\"],\n \"vocab_size\": 10}", false, DeepSpeedOptions{},
			"c.json:1:1: hidden_size is missing"},
		{"hf key", "{\"architectures\": [\"LlamaForCausalLM\"], \"vocab_size\": 10,\n \"hidden_size\": 64, \"num_attention_heads\": 8, \"num_hidden_layers\": 2,\n \"num_key_value_heads\": 3}", false, DeepSpeedOptions{},
			"c.json:3:2: num_key_value_heads=3 does not divide num_attention_heads=8"},
		{"hf text_config key missing", "{\"architectures\": [\"Mistral3ForConditionalGeneration\"],\n \"text_config\": {\"model_type\": \"mistral\", \"vocab_size\": 10}}", false, DeepSpeedOptions{},
			"c.json:2:2: text_config.hidden_size is missing"},
		{"hf no key", "{\"architectures\": [\"T5ForConditionalGeneration\"]}", false, DeepSpeedOptions{},
			"c.json:1:2: architectures \"T5ForConditionalGeneration\" is not supported"},
	} {
		var err error
		if tc.ds {
			_, err = ImportDeepSpeed("c.json", []byte(tc.in), tc.o)
		} else {
			_, err = ImportHF("c.json", []byte(tc.in))
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q…", tc.name, err, tc.want)
		}
	}
}

// TestImportMegatronGPT2Vocab: GPT2BPETokenizer's size is len() of its
// --vocab-file (Megatron's _GPT2BPETokenizer.vocab_size); for
// gpt2-vocab.json, the file Megatron names for GPT-2, it is GPT-2's 50,257
// tokens (transformers' GPT2Config default), padded to 50,304 (393 × 128);
// another file, or one the script computes, is still refused, at the flag.
func TestImportMegatronGPT2Vocab(t *testing.T) {
	base := "pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 2 --tokenizer-type GPT2BPETokenizer --merge-file gpt2-merges.txt --vocab-file "
	for _, tc := range []struct {
		file  string
		vocab int64
		want  string
	}{
		{"gpt2-vocab.json", 50304, "GPT-2's vocabulary, 50257 tokens"},
		{"/data/gpt2/gpt2-vocab.json", 50304, "GPT-2's vocabulary, 50257 tokens"},
		{"my-vocab.json", 0, "args.txt:1:141: --tokenizer-type GPT2BPETokenizer reads its vocabulary from a file"},
		{"$VOCAB", 0, "args.txt:1:141: --tokenizer-type GPT2BPETokenizer reads its vocabulary from a file"},
	} {
		m, err := ImportMegatron("args.txt", []byte(base+tc.file), MegatronOptions{})
		if tc.vocab == 0 {
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q…", tc.file, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if m.Model.Vocab != tc.vocab || !strings.Contains(strings.Join(m.Notes, "\n"), tc.want) {
			t.Errorf("%s: vocab %d, notes %q; want %d and %q", tc.file, m.Model.Vocab, m.Notes, tc.vocab, tc.want)
		}
	}
}
