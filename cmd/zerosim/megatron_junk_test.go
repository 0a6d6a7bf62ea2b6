package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportMegatronNotText: a file that is not UTF-8 text is refused at
// its first such byte, as the other importers refuse it, not echoed back
// as a line of escaped bytes (QA25 L10).
func TestImportMegatronNotText(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.yaml")
	data := []byte("#!/bin/bash\n# ok\nab\xa5\x1a\xad\x84" + strings.Repeat("\x90\xfe", 200) + "\n")
	if err := os.WriteFile(junk, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"import", "megatron", junk}
	code, out, errOut := runMain(t, "", args...)
	oneLine(t, args, code, out, errOut, junk+":3:3: byte 0xa5 is not UTF-8")
	if len(errOut) > 300 || strings.Contains(errOut, `\x90`) {
		t.Errorf("the message echoes the bytes: %q", errOut)
	}
}
