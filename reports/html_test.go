package reports

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunHTMLSelfContained checks report.html holds everything inline: no
// scripts, no external references, every plot as inline SVG.
func TestRunHTMLSelfContained(t *testing.T) {
	run := tinyRun(t)
	var b bytes.Buffer
	if err := writeRunHTML(&b, run, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d inline SVGs, want 4", n)
	}
	for _, bad := range []string{"<script", "http://", "https://", "src=", "<link", "@import"} {
		if bad == "http://" {
			// The SVG namespace declarations are not fetched.
			page := strings.ReplaceAll(strings.ReplaceAll(page, "http://www.w3.org/2000/svg", ""), "http://www.w3.org/1999/xlink", "")
			if strings.Contains(page, bad) {
				t.Errorf("report.html contains %q", bad)
			}
			continue
		}
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	for _, want := range []string{"zerosim run: tiny-zero3", "ZeRO-3 exposes 100.0 % of its all-gather time", "backward reduce-scatter", "logical/rank (seed accounting)", "fp32 master params"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestRunHTMLChromium renders report.html in headless Chromium: nothing
// fails to load and the screenshot is not blank. Without /usr/bin/chromium
// the test skips, unless ZEROSIM_REQUIRE_CHROMIUM=1 (CI) makes it fail.
func TestRunHTMLChromium(t *testing.T) {
	bin := "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("ZEROSIM_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium is required (ZEROSIM_REQUIRE_CHROMIUM=1) but %s is missing: %v", bin, err)
		}
		t.Skipf("%s not installed (apt-get install -y chromium); skipping the browser check", bin)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := writeRunHTML(&b, exampleRun(t, "seed000-k4"), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "out.png")
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0",
		"--screenshot="+shot, "--window-size=1280,2000", "file://"+page)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "Failed to load resource") || strings.Contains(line, "net::ERR") {
			t.Errorf("chromium: %s", line)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if n := nonWhite(img); n < 50_000 {
		t.Errorf("screenshot has %d non-white pixels; the page looks blank", n)
	}
}

func nonWhite(img image.Image) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || b < 0xf000 {
				n++
			}
		}
	}
	return n
}
