package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// cdp is a minimal Chrome DevTools Protocol client over Chromium's
// --remote-debugging-pipe (commands on fd 3, replies and events on fd 4,
// each message JSON ended by a NUL byte), enough to load a page, collect
// what its console reports and evaluate an expression in it.
type cdp struct {
	w       *os.File
	mu      sync.Mutex
	next    int
	replies map[int]chan cdpMsg
	events  chan cdpMsg
}

type cdpMsg struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func startCDP(t *testing.T, bin, dir string) *cdp {
	t.Helper()
	toChrome, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromChrome, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-pipe", "--window-size=1280,2000", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, outW} // fd 3, fd 4
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	toChrome.Close()
	outW.Close()
	c := &cdp{w: cmdW, replies: map[int]chan cdpMsg{}, events: make(chan cdpMsg, 1024)}
	t.Cleanup(func() {
		cmdW.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		fromChrome.Close()
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", stderr.String())
		}
	})
	go func() {
		r := bufio.NewReader(fromChrome)
		for {
			b, err := r.ReadBytes(0)
			if err != nil {
				close(c.events)
				return
			}
			var m cdpMsg
			if json.Unmarshal(b[:len(b)-1], &m) != nil {
				continue
			}
			if m.ID != 0 {
				c.mu.Lock()
				ch := c.replies[m.ID]
				delete(c.replies, m.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			c.events <- m
		}
	}()
	return c
}

// call sends method with params (on session, when not "") and returns its
// result.
func (c *cdp) call(t *testing.T, session, method string, params any) json.RawMessage {
	t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan cdpMsg, 1)
	c.replies[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			t.Fatalf("%s: %s", method, m.Error.Message)
		}
		return m.Result
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no reply from chromium in 30 s", method)
	}
	return nil
}

// pageView is what a reader of report.html sees, as the browser laid it out.
type pageView struct {
	Title   string
	H2      []string
	Figures []struct {
		Caption string
		W, H    float64 // the SVG's box on the page
		BBoxW   float64 // the drawn content's box
		BBoxH   float64
		Texts   int
	}
	Images []struct {
		Src      string
		Complete bool
		W, H     int
	}
	Tables []struct {
		Head    []string
		Rows    int
		Visible bool
		ID      string // the id of the div holding the table
	}
	Banner struct { // the not-fit banner
		Text    string
		Visible bool
		Top     float64
	}
	HeadlineTop float64
}

const pageViewJS = `JSON.stringify({
  Title: document.title,
  H2: [...document.querySelectorAll('h2')].map(h => h.textContent),
  Figures: [...document.querySelectorAll('figure')].map(f => {
    const s = f.querySelector('svg');
    const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
    const b = s ? s.getBBox() : {width: 0, height: 0};
    return {Caption: (f.querySelector('figcaption') || {}).textContent || '', W: r.width, H: r.height,
      BBoxW: b.width, BBoxH: b.height, Texts: s ? s.querySelectorAll('text').length : 0};
  }),
  Images: [...document.images].map(i => ({Src: i.src.slice(0, 80), Complete: i.complete, W: i.naturalWidth, H: i.naturalHeight})),
  Tables: [...document.querySelectorAll('table')].map(t => ({
    Head: [...t.querySelectorAll('thead th')].map(th => th.textContent),
    Rows: t.querySelectorAll('tbody tr').length,
    Visible: t.getBoundingClientRect().height > 0,
    ID: (t.parentElement && t.parentElement.id) || ''})),
  Banner: (() => { const b = document.getElementById('not-fit');
    return b ? {Text: b.textContent, Visible: b.getBoundingClientRect().height > 0, Top: b.getBoundingClientRect().top}
             : {Text: '', Visible: false, Top: 0}; })(),
  HeadlineTop: (document.querySelector('dl.headline') || document.body).getBoundingClientRect().top,
})`

// loadPage opens file in a new tab, waits for its load event and returns
// what the reader sees and every console error, uncaught exception and
// browser log error (a resource that failed to load) the page caused.
func loadPage(t *testing.T, c *cdp, file string) (pageView, []string) {
	t.Helper()
	var target struct{ TargetID string }
	json.Unmarshal(c.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}), &target)
	var att struct{ SessionID string }
	json.Unmarshal(c.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &att)
	s := att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		c.call(t, s, m, map[string]any{})
	}
	c.call(t, s, "Page.navigate", map[string]any{"url": "file://" + file})
	var problems []string
	deadline := time.After(30 * time.Second)
	for loaded := false; !loaded; {
		select {
		case m, ok := <-c.events:
			if !ok {
				t.Fatal("chromium closed the pipe")
			}
			if m.SessionID != s {
				continue
			}
			if p := cdpProblem(m); p != "" {
				problems = append(problems, p)
			}
			loaded = m.Method == "Page.loadEventFired"
		case <-deadline:
			t.Fatal("report.html did not finish loading in 30 s")
		}
	}
	var ev struct {
		Result struct{ Value string }
	}
	json.Unmarshal(c.call(t, s, "Runtime.evaluate", map[string]any{"expression": pageViewJS, "returnByValue": true}), &ev)
	var v pageView
	if err := json.Unmarshal([]byte(ev.Result.Value), &v); err != nil {
		t.Fatalf("page view %q: %v", ev.Result.Value, err)
	}
	// Events that arrived while evaluating.
	for {
		select {
		case m := <-c.events:
			if p := cdpProblem(m); p != "" && m.SessionID == s {
				problems = append(problems, p)
			}
			continue
		default:
		}
		break
	}
	return v, problems
}

// cdpProblem describes an event a reader would count as a fault: a console
// error, an uncaught exception, or a browser log entry at error level (a
// resource that failed to load); "" for anything else.
func cdpProblem(m cdpMsg) string {
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string
			Args []struct{ Value any }
		}
		json.Unmarshal(m.Params, &p)
		if p.Type == "error" || p.Type == "assert" {
			return fmt.Sprintf("console.%s: %v", p.Type, p.Args)
		}
	case "Runtime.exceptionThrown":
		return "exception: " + string(m.Params)
	case "Log.entryAdded":
		var p struct {
			Entry struct{ Level, Source, Text, URL string }
		}
		json.Unmarshal(m.Params, &p)
		if p.Entry.Level == "error" {
			return fmt.Sprintf("log %s: %s %s", p.Entry.Source, p.Entry.Text, p.Entry.URL)
		}
	}
	return ""
}

// TestRunHTMLChromium opens report.html in headless Chromium and checks what
// a reader sees: every plot drawn with a non-zero size (and every image, if
// any, decoded with a non-zero size), the tables present with their headers
// and rows, and no console error, exception or failed load. Without
// /usr/bin/chromium the test skips, unless ZEROSIM_REQUIRE_CHROMIUM=1 (CI)
// makes it fail; -short skips it (starting a browser is the slowest step
// of the suite).
func TestRunHTMLChromium(t *testing.T) {
	bin := "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("ZEROSIM_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium is required (ZEROSIM_REQUIRE_CHROMIUM=1) but %s is missing: %v", bin, err)
		}
		t.Skipf("%s not installed (apt-get install -y chromium); skipping the browser check", bin)
	}
	if testing.Short() && os.Getenv("ZEROSIM_REQUIRE_CHROMIUM") != "1" {
		t.Skip("-short: no browser")
	}
	dir := t.TempDir()
	c := startCDP(t, bin, dir)
	checkFaultsSeen(t, c, dir)
	v, problems := loadPage(t, c, writePage(t, dir, "report.html", exampleRun(t, "seed000-k4")))
	for _, p := range problems {
		t.Errorf("chromium: %s", p)
	}
	if v.Title != "zerosim run: seed000-k4" {
		t.Errorf("title %q", v.Title)
	}
	if len(v.Figures) != 4 {
		t.Errorf("%d figures, want the 4 plots", len(v.Figures))
	}
	for _, f := range v.Figures {
		if f.W < 100 || f.H < 100 || f.BBoxW <= 0 || f.BBoxH <= 0 || f.Texts == 0 {
			t.Errorf("plot %.40q: shown %.0f×%.0f px, drawing %.0f×%.0f, %d texts; want a visible, drawn plot", f.Caption, f.W, f.H, f.BBoxW, f.BBoxH, f.Texts)
		}
	}
	for _, im := range v.Images {
		if !im.Complete || im.W == 0 || im.H == 0 {
			t.Errorf("image %s: complete %v, %d×%d; want decoded with a non-zero size", im.Src, im.Complete, im.W, im.H)
		}
	}
	// The step-time, communication, memory and critical-path tables, each
	// with its header and rows, laid out on the page.
	wantHeads := [][]string{{"rank", "end", "compute"}, {"phase", "collectives"}, {"component", "at rest (B)", "at rest", "peak (B)"},
		{"rank", "task", "start", "duration"}}
	if len(v.Tables) != len(wantHeads) {
		t.Fatalf("%d tables, want %d: %+v", len(v.Tables), len(wantHeads), v.Tables)
	}
	for i, want := range wantHeads {
		tb := v.Tables[i]
		if len(tb.Head) < len(want) || strings.Join(tb.Head[:len(want)], ",") != strings.Join(want, ",") || tb.Rows == 0 || !tb.Visible {
			t.Errorf("table %d: header %q, %d rows, visible %v; want a header starting %q and rows", i, tb.Head, tb.Rows, tb.Visible, want)
		}
	}
	for _, h := range []string{"Key findings", "Memory of the scenario's stage", "Plots"} {
		if !strings.Contains(strings.Join(v.H2, "|"), h) {
			t.Errorf("no %q section; sections %q", h, v.H2)
		}
	}
	if v.Banner.Text != "" || v.Banner.Visible {
		t.Errorf("a step that fits shows the banner %q", v.Banner.Text)
	}

	// A step that does not fit (Llama 2 7B with ZeRO-0 on 80 GB GPUs):
	// the banner shows above the headline, and the memory section is a
	// table a reader sees, with the component rows.
	v, problems = loadPage(t, c, writePage(t, dir, "notfit.html", exampleRun(t, "default", "parallelism.zero_stage=0")))
	for _, p := range problems {
		t.Errorf("chromium, not-fit page: %s", p)
	}
	if !v.Banner.Visible || !strings.Contains(v.Banner.Text, "Does not fit in GPU memory: allocated peak 125.51 GiB") || v.Banner.Top >= v.HeadlineTop {
		t.Errorf("not-fit banner: %+v (headline at %.0f px); want it visible above the headline", v.Banner, v.HeadlineTop)
	}
	var mem bool
	for _, tb := range v.Tables {
		if tb.ID == "memory-table" {
			mem = tb.Visible && tb.Rows == 14 && len(tb.Head) == 8 && tb.Head[0] == "component"
		}
	}
	if !mem {
		t.Errorf("not-fit page: no visible memory table with 14 component rows (loss temporaries among them): %+v", v.Tables)
	}
}

// writePage writes run's report.html into dir as name and returns its path.
func writePage(t *testing.T, dir, name string, run *Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeRunHTML(&b, run, nil); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, name)
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return page
}

// checkFaultsSeen loads a page with the faults the report check looks for
// (a console error, an exception, a missing image, an empty plot) and
// fails unless loadPage reports each of them: the check can fail.
func checkFaultsSeen(t *testing.T, c *cdp, dir string) {
	t.Helper()
	bad := filepath.Join(dir, "bad.html")
	html := `<!DOCTYPE html><html><head><title>bad</title></head><body>
<img src="missing.png"><figure><svg width="0" height="0"></svg><figcaption>empty</figcaption></figure>
<script>console.error("boom"); throw new Error("bang");</script></body></html>`
	if err := os.WriteFile(bad, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	v, problems := loadPage(t, c, bad)
	all := strings.Join(problems, "\n")
	for _, want := range []string{"console.error", "exception", "missing.png"} {
		if !strings.Contains(all, want) {
			t.Errorf("faulty page: %q not reported; reported:\n%s", want, all)
		}
	}
	if len(v.Images) != 1 || v.Images[0].W != 0 || len(v.Figures) != 1 || v.Figures[0].W != 0 {
		t.Errorf("faulty page seen as %+v", v)
	}
}
