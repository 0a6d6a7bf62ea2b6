package scenarios

import (
	"os"
	"strings"
	"testing"
)

// TestMegatronUnclosedQuote: a quote the script never closes is the error,
// at the quote (QA22 L7: `--hidden-size 4096 "unterminated` said
// "--hidden-size takes one value, not 2", as the quote took the rest of
// the script into one word). In a whole script the stray quote closes at
// the next one (line 58's runs to line 106 of NVIDIA's script) and the
// last is left open at line 188: the first quote that spans lines is named.
func TestMegatronUnclosedQuote(t *testing.T) {
	data, err := os.ReadFile("testdata/megatron/train_llama3_8b_h100_fp8.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(string(data), "    --hidden-size 4096\n", "    --hidden-size 4096 \"unterminated\n", 1)
	if script == string(data) {
		t.Fatal("the script has no --hidden-size 4096 line")
	}
	for _, c := range []struct{ src, want string }{
		{"torchrun pretrain_gpt.py --hidden-size 4096 \"unterminated\n", "s.sh:1:45: the \" quote opened here is never closed (bash: unexpected EOF while looking for matching `\"'): close it"},
		{"torchrun pretrain_gpt.py --hidden-size 'x\n", "s.sh:1:40: the ' quote opened here is never closed (bash: unexpected EOF while looking for matching `''): close it"},
		{script, "s.sh:58:24: this quote runs to line 106, and the \" at 188:27 is never closed (bash: unexpected EOF while looking for matching `\"'): close the quote where it belongs"},
	} {
		_, err := ImportMegatron("s.sh", []byte(c.src), MegatronOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}
