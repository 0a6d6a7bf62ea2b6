package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzImportMegatron feeds bytes to the Megatron importer, seeded with
// Megatron-LM's launch scripts (testdata/megatron) and small argument
// lists and scripts for each mapping: it never panics, every error is one
// line naming the file, and a scenario with the cluster given loads with
// the header's parameter count.
func FuzzImportMegatron(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/megatron/*.sh")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	base := "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 2 --tokenizer-type NullTokenizer --vocab-size 1000 "
	for _, s := range []string{"", "--", "-- x", "$", "${", "$(", "'", "\"", "\\", "A=(\n", "A=( ${A[@]} )\nA+=(x)\n",
		base,
		base + "--swiglu --normalization RMSNorm --position-embedding-type rope --disable-bias-linear --untie-embeddings-and-output-weights --group-query-attention --num-query-groups 2 --kv-channels 8",
		base + "--add-qkv-bias --disable-bias-linear --max-position-embeddings 256 --global-batch-size 64 --bf16 --use-distributed-optimizer --num-distributed-optimizer-instances 2 --overlap-grad-reduce --overlap-param-gather --ddp-bucket-size 1000",
		base + "--recompute-granularity full --recompute-method uniform --recompute-num-layers 2 --fp16 --attention-backend unfused --context-parallel-size 2",
		"N=2\nARGS=(\n  --num-layers $N # c\n  --hidden-size \"64\"\n)\nif x; then ARGS+=(--swiglu); fi\ntorchrun --nnodes=1 --nproc-per-node ${G:-4} \\\n  pretrain_gpt.py ${ARGS[@]} --num-attention-heads 4 --seq-length 8 --max-position-embeddings 8 --micro-batch-size 1 --tokenizer-type TikTokenizer\n",
		// The if evaluator (review s18 B1-B3): defaults of arguments and
		// the environment, an empty value, [ with an unquoted empty word,
		// a pipeline, a function body, a { } group.
		"T=${3:-\"MOCK\"}\nM=\"\"\nD=\nf() { if [ a = a ]; then A=(--swiglu); fi; }\n{ B=(--bf16); }\nif [[ \"$T\" == MOCK ]] || [ -n $D ] | false; then A=(--fp16); elif [ \"${U:-1}\" = \"${M:-1}\" ]; then A=(--bf16); fi\ntorchrun pretrain_gpt.py " + base + "${A[@]} ${B[@]}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := ImportMegatron("t.sh", data, MegatronOptions{}); err == nil {
			_ = m.Scenario()
		}
		m, err := ImportMegatron("t.sh", data, MegatronOptions{Nodes: 2, GPUsPerNode: 8, GPU: "H100-80GB"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "t.sh") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		out := m.Scenario()
		for _, n := range m.Notes {
			if strings.ContainsAny(n, "\n\r") {
				t.Fatalf("note %q is not one line", n)
			}
		}
		s, err := Load("s.yaml", out, nil)
		if err != nil && !strings.Contains(err.Error(), "buckets (use a bucket_size of at least") {
			// Only a model too large for the default bucket's 262,144
			// buckets may fail (Load's limit, memory.MaxBuckets).
			t.Fatalf("the imported scenario does not load: %v\n%s", err, out)
		}
		if err == nil && int64(s.Model.Params) != m.Params {
			t.Fatalf("%d parameters, header %d", s.Model.Params, m.Params)
		}
	})
}
