package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestActiveLabel (QA5 F6): import and run say what their active count
// holds beside the blocks, as model cards differ: the input embedding
// (Mistral's 12.9 B for Mixtral-8x7B counts it; OpenAI's 3.61 B for
// gpt-oss-20b does not: 4,187,440,704 − the 579,133,440 embedding =
// 3,608,307,264, arXiv 2508.10925 Table 1) and DeepSeek-V3's MTP module
// when --mtp-layers builds it (its card's 37 B leaves it out; the total
// less 58 MoE layers × 248 of 256 experts of 3·7168·2048 without it, 59
// with it). A dense model prints no active count.
func TestActiveLabel(t *testing.T) {
	// Active counts: the published totals (TestImportHF) less the routed
	// experts a token does not reach, worked as TestImportHF does.
	const (
		mixtral = 46_702_792_704 - 32*6*3*4096*14336          // 12,879,925,248
		gptOSS  = 20_914_757_184 - 24*28*(3*2880*2880+3*2880) // 4,187,440,704
		dsv3    = 671_026_419_200 - 58*248*3*7168*2048        // 37,552,297,472
		dsv3MTP = 682_636_487_424 - 59*248*3*7168*2048        // 38,240,398,080
	)
	for _, c := range []struct{ file, want string }{
		{"hf/mixtral-8x7b/config.json", "46,702,792,704 parameters, " + commas(mixtral) + " active per token incl. the input embedding\n"},
		{"hf-extra/gpt-oss-20b.json", "20,914,757,184 parameters, " + commas(gptOSS) + " active per token incl. the input embedding\n"},
		{"hf-extra/deepseek-v3.json", "671,026,419,200 parameters, " + commas(dsv3) + " active per token incl. the input embedding\n"},
		{"hf-extra/deepseek-v3.json --mtp-layers 1", "682,636,487,424 parameters, " + commas(dsv3MTP) + " active per token incl. the input embedding and the MTP module\n"},
		{"hf-extra/llama-3.1-70b.json", "70,553,706,496 parameters\n"},
	} {
		file, flag, _ := strings.Cut(c.file, " ")
		args := append([]string{"import", "hf", "../../scenarios/testdata/" + file}, strings.Fields(flag)...)
		out, stderr, code := runValidateCLI(t, nil, args...)
		first, _, _ := strings.Cut(out, "\n")
		if code != 0 || !strings.HasSuffix(first+"\n", ": "+c.want) {
			t.Errorf("import %s: code %d, %q (%s); want it to end %q", c.file, code, first, stderr, c.want)
		}
	}
	doc := "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\nmodel: {hf_config: ../../scenarios/testdata/hf-extra/gpt-oss-20b.json}\nparallelism: {dp: 8, zero_stage: 3}\n"
	out, stderr, code := runValidateCLI(t, []byte(doc), "run", "-")
	want := fmt.Sprintf("%s active per token incl. the input embedding (", commas(gptOSS))
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("run gpt-oss-20b: code %d (%s); model line lacks %q", code, stderr, want)
	}
}
