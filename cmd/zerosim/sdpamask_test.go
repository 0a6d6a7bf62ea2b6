package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zerosim/zerosim/internal/golden"
)

// TestSDPAMaskPeaks: end to end, `zerosim memory` and `zerosim run` put
// the sdpa mask into the peak. Mistral 7B v0.1 (sliding_window 4096) at
// seq_len 8192 on 8 H100s at ZeRO-3, micro-batch 1, against the same
// config with sliding_window null: with no checkpointing the peak
// (lm_head's backward) rises by the 32 blocks' bf16 additive masks,
// 32·2·8192² = 4,294,967,296 B; under full recompute by the boolean mask
// the checkpointed blocks hold, 8192² = 67,108,864 B (memory/sdpamask.go).
// flash keeps no mask: the two configs peak alike.
func TestSDPAMaskPeaks(t *testing.T) {
	src, err := os.ReadFile("../../scenarios/testdata/hf/mistral-7b-v0.1/config.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	noWin := filepath.Join(dir, "nowindow.json")
	if err := os.WriteFile(noWin, bytes.Replace(src, []byte(`"sliding_window": 4096`), []byte(`"sliding_window": null`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	win, _ := filepath.Abs("../../scenarios/testdata/hf/mistral-7b-v0.1/config.json")
	peaks := func(config, recompute, attention string) (memPeak, runPeak int64) {
		t.Helper()
		path := filepath.Join(dir, "s.yaml")
		y := fmt.Sprintf("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu: H100-80GB}\n"+
			"model: {hf_config: %s, seq_len: 8192}\nparallelism: {dp: 8, zero_stage: 3}\n"+
			"training: {micro_batch: 1, attention: %s, recompute: %s}\n", config, attention, recompute)
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runMain(t, "", "memory", path, "--stage", "3", "--format", "json")
		if code != 0 {
			t.Fatalf("memory: exit %d: %s", code, errOut)
		}
		var doc struct {
			Reports []struct {
				Peak int64 `json:"peak"`
			} `json:"reports"`
		}
		err := json.Unmarshal([]byte(out), &doc)
		m := doc.Reports
		if err != nil || len(m) != 1 {
			t.Fatalf("memory json: %v (%d reports)", err, len(m))
		}
		code, out, errOut = runMain(t, "", "run", path, "--format", "json")
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, errOut)
		}
		var r struct {
			Memory struct {
				Peak int64 `json:"peak_bytes"`
			} `json:"memory"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return m[0].Peak, r.Memory.Peak
	}
	for _, c := range []struct {
		recompute, attention string
		rise                 int64
	}{
		{"none", "sdpa", 32 * 2 * 8192 * 8192}, // 32 blocks × bf16 × s²
		{"full", "sdpa", 8192 * 8192},          // one boolean s²
		{"none", "flash", 0},
	} {
		mw, rw := peaks(win, c.recompute, c.attention)
		mn, rn := peaks(noWin, c.recompute, c.attention)
		if mw-mn != c.rise || rw-rn != c.rise {
			t.Errorf("%s, %s: memory peak %d − %d = %+d B, run peak %d − %d = %+d B; want %+d",
				c.attention, c.recompute, mw, mn, mw-mn, rw, rn, rw-rn, c.rise)
		}
		// docs/memory-model.md quotes the two sdpa rises as run measures them.
		switch c.recompute {
		case "none":
			if c.attention == "sdpa" {
				golden.CheckQuotes(t, "../../docs/memory-model.md", "TestSDPAMaskPeaks",
					fmt.Sprintf("rises by %d GiB, %s B", (rw-rn)>>30, commas(rw-rn)))
			}
		case "full":
			golden.CheckQuotes(t, "../../docs/memory-model.md", "TestSDPAMaskPeaks",
				fmt.Sprintf("the peak rises by the boolean mask, %d MiB", (rw-rn)>>20))
		}
	}
}
