package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The web console in a real browser: headless Chromium (Debian's
// chromium package; scripts/test.sh installs it when it is missing and
// it may) driven through the DevTools protocol. One browser, the pages
// visited in sequence against one secured node: each page is checked
// through its DOM, every action is done by clicking, and the same
// actions are refused (the UI shows the 403) for a user without the
// grant. Screenshots of every page go to a temp dir, and to
// $NARAD_CONSOLE_SHOTS when it is set.

// chromium finds the browser; a missing one fails the test, never skips
// it: CI installs it (scripts/test.sh).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found for the web console's browser tests: install it (Debian: apt-get install -y chromium); scripts/test.sh does so when run as root")
	return ""
}

type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots []string // directories screenshots go to
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.WindowSize(1400, 900),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox will not start
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelB(); cancelA() })
	b := &browser{t: t, ctx: ctx, base: base, shots: []string{t.TempDir()}}
	if d := os.Getenv("NARAD_CONSOLE_SHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		b.shots = append(b.shots, d)
	}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting Chromium: %v", err)
	}
	return b
}

func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.shot("failed-" + strings.NewReplacer(" ", "-", "/", "-").Replace(what))
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads a console URL as a fresh page load (a deep link).
func (b *browser) open(hash string) {
	b.t.Helper()
	b.run("open "+hash, chromedp.Navigate(b.base+"/console/"+hash))
}

// until waits for a JavaScript condition to hold in the page: the
// console polls and renders asynchronously, so every check waits on
// what the DOM shows, never on time.
func (b *browser) until(what, expr string) {
	b.t.Helper()
	if !b.holds(expr, 15*time.Second) {
		b.shot("failed-" + strings.NewReplacer(" ", "-", "/", "-").Replace(what))
		b.t.Fatalf("waiting for %s (%s): not true within 15 s", what, expr)
	}
}

// holds reports whether expr becomes true within timeout.
func (b *browser) holds(expr string, timeout time.Duration) bool {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool]("(() => { try { return !!("+expr+") } catch { return false } })()", chromedp.WithPollingTimeout(timeout)))
	return err == nil
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	for _, d := range b.shots {
		if err := os.WriteFile(filepath.Join(d, "console-"+name+".png"), png, 0o644); err != nil {
			b.t.Errorf("screenshot %s: %v", name, err)
		}
	}
}

// scrollsSideways says whether the page is wider than the window (a
// table should scroll inside its own box instead).
func (b *browser) scrollsSideways() bool {
	b.t.Helper()
	wide, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil {
		b.t.Fatal(err)
	}
	return wide
}

// media emulates prefers-color-scheme ("" ends the emulation).
func media(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		var fs []*emulation.MediaFeature
		if scheme != "" {
			fs = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
		}
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: fs})
		return err
	})
}

// submit clicks the form's submit button (chromedp.Submit calls
// form.submit(), which skips the submit event the console listens to).
func submit(form string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(form + " button[type=submit]"))
}

// signIn fills and sends the sign-in form (the page must show it).
func (b *browser) signIn(user, pass string) {
	b.t.Helper()
	b.run("sign in as "+user,
		chromedp.SetValue(chromedp.CSS("#login-user"), user),
		chromedp.SetValue(chromedp.CSS("#login-password"), pass),
		submit("form[data-form=login]"))
}

// has is a JS expression: the selector matches an element.
func has(sel string) string { return fmt.Sprintf("document.querySelector(%q) !== null", sel) }

// refused is a JS expression: the page shows a 403 problem.
const refused = `document.querySelector('.problem[data-status="403"]') !== null`

// asRoot calls the API as the root admin of a secure node; an answer
// of 300 or more fails the test.
func asRoot(t *testing.T, n *node) func(method, path string, body any) biAnswer {
	return func(method, path string, body any) biAnswer {
		t.Helper()
		a := asUser(t, n, "admin", rootPass, method, path, body)
		if a.status >= 300 {
			t.Fatalf("%s: %d %s", a.what, a.status, a.body)
		}
		return a
	}
}

func TestConsoleInABrowser(t *testing.T) {
	n := startSecureNode(t)
	const admin, readerPass = "admin", "reader-password-1"
	root := asRoot(t, n)
	describe := func(topic string) (d struct {
		RetentionMs int64 `json:"retention_ms"`
		Stats       []struct {
			HWM      uint64 `json:"high_watermark"`
			Frontier uint64 `json:"consumer_frontier"`
			InFlight *int   `json:"in_flight"`
			OldestAt int64  `json:"oldest_unconsumed_at_ms"`
		} `json:"partition_stats"`
	}) {
		t.Helper()
		if err := json.Unmarshal(root("GET", "/v1/topics/"+topic, nil).body, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	sums := func(topic string) (hwm, frontier uint64) {
		for _, p := range describe(topic).Stats {
			hwm += p.HWM
			frontier += p.Frontier
		}
		return
	}

	// The cast: a parent with a child, a topic with a dead-letter topic
	// holding one poison record, records of every payload kind, and a
	// user who may only consume orders.
	root("POST", "/v1/users", userBody{Username: "reader", Password: readerPass, Grants: []grant{{Action: "consume", Patterns: []string{"orders"}}}})
	root("POST", "/v1/topics", map[string]any{"name": "orders", "partitions": 3})
	root("POST", "/v1/topics", map[string]any{"name": "orders-audit", "parent": "orders"})
	root("POST", "/v1/topics", map[string]any{"name": "orders-dlq", "partitions": 1})
	root("POST", "/v1/topics", map[string]any{"name": "jobs", "partitions": 1, "visibility_timeout_ms": 1000, "max_deliveries": 1, "dead_letter_topic": "orders-dlq"})
	for i := 0; i < 4; i++ {
		root("POST", fmt.Sprintf("/v1/topics/orders/produce?partition=0&key=customer-%d", i), []byte(fmt.Sprintf(`{"order_id":"ord_%d","amount":%d}`, i, 10*i)))
	}
	root("POST", "/v1/topics/orders/produce?partition=0", []byte("plain text, not JSON"))
	root("POST", "/v1/topics/orders/produce?partition=0", []byte{0xff, 0x00, 0xfe})
	root("POST", "/v1/topics/jobs/produce", []byte(`{"job":"poison"}`))
	var got struct {
		Messages []struct {
			Handle string `json:"receipt_handle"`
		} `json:"messages"`
	}
	json.Unmarshal(root("GET", "/v1/topics/jobs/consume?wait=5s&max=1", nil).body, &got)
	if len(got.Messages) != 1 {
		t.Fatalf("jobs gave %d records", len(got.Messages))
	}
	root("POST", "/v1/topics/jobs/ack?receipt_handle="+got.Messages[0].Handle+"&extend=0", nil)
	eventually(t, 20*time.Second, "the poison record in orders-dlq", func() bool {
		asUser(t, n, admin, rootPass, "GET", "/v1/topics/jobs/consume?max=1", nil) // offers nothing: it is past max_deliveries
		h, _ := sums("orders-dlq")
		return h == 1
	})

	b := newBrowser(t, "http://"+n.http)

	// GET / lands on the console, which asks to sign in.
	b.run("open /", chromedp.Navigate(b.base+"/"))
	b.until("the sign-in page", has("form[data-form=login]"))
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "/console/#/login") {
		t.Errorf("GET / ended at %s, want the console's sign-in", loc)
	}
	b.shot("login")
	signIn := func(user, pass string) {
		b.signIn(user, pass)
		b.until("the topics page after sign-in", has(`tr[data-row="orders"]`))
	}
	signIn(admin, rootPass)

	// Topics: every topic listed, with its figures; the search narrows.
	for _, name := range []string{"orders", "orders-audit", "orders-dlq", "jobs"} {
		b.until("topic "+name+" listed", has(`tr[data-row="`+name+`"]`))
	}
	b.until("the backlog of orders shown", `document.querySelector('tr[data-row="orders"] td:nth-child(4)').textContent === "6"`)
	// The oldest unconsumed record's age, per topic: the cell carries the
	// commit time describe gives (the earliest over the partitions), and
	// a topic with nothing unconsumed shows none.
	for _, name := range []string{"orders", "orders-dlq", "jobs"} {
		var oldest int64
		for _, p := range describe(name).Stats {
			if p.OldestAt != 0 && (oldest == 0 || p.OldestAt < oldest) {
				oldest = p.OldestAt
			}
		}
		if name == "orders" && oldest == 0 {
			t.Fatalf("describe gives orders, six records unconsumed, no oldest unconsumed time")
		}
		cell := fmt.Sprintf(`document.querySelector('tr[data-row="%s"] td:nth-child(7)')`, name)
		if oldest == 0 {
			b.until(name+" with nothing unconsumed", cell+`.textContent === "—" && !`+cell+`.querySelector('[data-at-ms]')`)
		} else {
			b.until(name+"'s oldest unconsumed age", fmt.Sprintf(`%s.querySelector('[data-at-ms]').dataset.atMs === "%d" && /^\d+ (s|min)$/.test(%s.textContent)`, cell, oldest, cell))
		}
	}
	b.shot("topics")
	b.run("search", chromedp.SendKeys(chromedp.CSS("#topic-search"), "dlq"))
	b.until("the search keeps orders-dlq only", has(`tr[data-row="orders-dlq"]`)+` && !document.querySelector('tr[data-row="orders"]')`)

	// Create a topic by the form.
	b.run("create a topic",
		chromedp.Click(chromedp.CSS("details.card summary")),
		chromedp.SetValue(chromedp.CSS("#create-name"), "made-in-ui"),
		submit("form[data-form=create-topic]"))
	b.until("the create is confirmed", has(".ok"))
	if a := asUser(t, n, admin, rootPass, "GET", "/v1/topics/made-in-ui", nil); a.status != http.StatusOK {
		t.Fatalf("the topic created in the console: %d %s", a.status, a.body)
	}

	// A deep link to a topic: partitions, children, charts, settings.
	b.open("#/topics/orders")
	b.until("three partitions", `document.querySelectorAll('table[data-table=partitions] tbody tr').length === 3`)
	b.until("the child listed", has(`table[data-table=children] tr[data-row="orders-audit"]`)+" && "+has(`svg[data-graph=children]`))
	b.until("the charts drawn", `document.querySelectorAll('figure.chart').length === 3 && document.querySelector('figure[data-chart=backlog] .value').textContent === "6"`)
	if got := b.text(`table[data-table=partitions] tbody tr:first-child td:nth-child(4)`); got != "6" {
		t.Errorf("partition 0's high watermark shows %q, want 6", got)
	}
	// Two records leased: partition 0 shows them in flight (the page
	// refreshes on its own), and its oldest unconsumed record's time.
	var leased struct {
		Messages []struct {
			Handle string `json:"receipt_handle"`
		} `json:"messages"`
	}
	json.Unmarshal(root("GET", "/v1/topics/orders/consume?partition=0&max=2", nil).body, &leased)
	if len(leased.Messages) != 2 {
		t.Fatalf("leased %d records of orders, want 2", len(leased.Messages))
	}
	p0 := describe("orders").Stats[0]
	if p0.InFlight == nil || *p0.InFlight != 2 || p0.OldestAt == 0 {
		t.Fatalf("describe of orders' partition 0 after two leases: in flight %v, oldest unconsumed at %d", p0.InFlight, p0.OldestAt)
	}
	b.until("two in flight on partition 0", `document.querySelector('table[data-table=partitions] tbody tr:first-child td:nth-child(6)').textContent === "2" && document.querySelector('table[data-table=partitions] tbody tr:nth-child(2) td:nth-child(6)').textContent === "0"`)
	b.until("partition 0's oldest unconsumed", fmt.Sprintf(`document.querySelector('table[data-table=partitions] tbody tr:first-child td:nth-child(8) [data-at-ms]').dataset.atMs === "%d"`, p0.OldestAt))
	b.shot("topic")
	for _, m := range leased.Messages { // released, so the purge below settles the same seven
		root("POST", "/v1/topics/orders/ack?receipt_handle="+m.Handle+"&extend=0", nil)
	}
	b.run("edit retention",
		chromedp.SetValue(chromedp.CSS("#set-retention_ms"), "7200000"),
		submit("form[data-form=settings]"))
	b.until("the settings saved", has("form[data-form=settings] ~ div .ok"))
	if got := describe("orders").RetentionMs; got != 7_200_000 {
		t.Fatalf("retention after the console's edit: %d", got)
	}

	// Produce a test message.
	b.open("#/topics/orders/produce")
	b.run("produce",
		chromedp.WaitVisible(chromedp.CSS("#produce-payload")),
		chromedp.SetValue(chromedp.CSS("#produce-key"), "from-the-console"),
		chromedp.SetValue(chromedp.CSS("#produce-partition"), "0"),
		chromedp.SetValue(chromedp.CSS("#produce-headers"), "trace-id=abc-123"),
		chromedp.SetValue(chromedp.CSS("#produce-payload"), `{"made":"in the console"}`))
	b.shot("produce")
	b.run("submit the produce", submit("form[data-form=produce]"))
	b.until("the produce accepted", has("form[data-form=produce] .ok"))
	if h, _ := sums("orders"); h != 7 {
		t.Fatalf("orders holds %d records after the console's produce, want 7", h)
	}

	// The message browser: replay, the three views, paging and back.
	b.open("#/topics/orders/messages?p=0&o=0")
	b.until("seven records", `document.querySelectorAll('table[data-table=messages] tbody tr[data-row]').length === 7`)
	b.until("a JSON payload pretty-printed", `document.querySelector('tr[data-row="0"] pre.json').textContent.includes('"order_id": "ord_0"')`)
	b.until("the text payload", `document.querySelector('tr[data-row="4"] pre').textContent === "plain text, not JSON"`)
	b.until("the key", `document.querySelector('tr[data-row="6"] code').textContent === "from-the-console"`)
	b.until("the header", `document.querySelector('tr[data-row="6"] dl.headers').textContent.includes("abc-123")`)
	b.shot("messages")
	b.run("the hex view", chromedp.Click(chromedp.CSS(`a[data-view=hex]`)))
	b.until("hex dump of the binary record", `(document.querySelector('tr[data-row="5"] pre.hex')||{}).textContent?.includes('ff 00 fe')`)
	b.open("#/topics/orders/messages?p=0&o=0&n=2")
	b.until("a page of two", `document.querySelectorAll('table[data-table=messages] tbody tr[data-row]').length === 2`)
	b.run("next page", chromedp.Click(chromedp.CSS(`a[data-page=next]`)))
	b.until("the second page", has(`tr[data-row="2"]`)+` && !document.querySelector('tr[data-row="0"]')`)
	b.run("back", chromedp.NavigateBack())
	b.until("the back button returns to the first page", has(`tr[data-row="0"]`))

	// Dead letters: the poison record shown, redriven to its topic.
	b.open("#/dead-letters")
	b.until("the dead-letter topic with its record", `document.querySelector('[data-dlq="orders-dlq"] [data-backlog]').dataset.backlog === "1"`)
	b.until("the poison payload peeked", `document.querySelector('[data-dlq="orders-dlq"] .peek').textContent.includes('poison')`)
	b.shot("dead-letters")
	b.run("redrive", chromedp.Click(chromedp.CSS(`[data-dlq="orders-dlq"] button[data-action=redrive]`)))
	b.until("redrive confirmed", `document.querySelector('[data-outcome="orders-dlq"]').textContent.includes('Redrove 1 records to jobs')`)
	if h, _ := sums("jobs"); h != 2 {
		t.Fatalf("jobs holds %d records after the redrive, want 2", h)
	}
	if h, f := sums("orders-dlq"); f != h {
		t.Fatalf("orders-dlq after the redrive: frontier %d of %d", f, h)
	}

	// Purge, with its confirmation, on the topic page.
	b.open("#/topics/orders")
	// (The dead-letters page has purge buttons too: wait for the topic's.)
	b.until("the topic page", has(`[data-section=partitions] table`)+" && "+has("button[data-action=purge]"))
	b.run("purge", chromedp.Click(chromedp.CSS("button[data-action=purge]")))
	b.until("the confirmation", has(".confirm button[data-action=confirm]"))
	if _, f := sums("orders"); f != 0 {
		t.Fatalf("purged before the confirmation: frontier %d", f)
	}
	b.run("confirm the purge", chromedp.Click(chromedp.CSS(".confirm button[data-action=confirm]")))
	b.until("the purge confirmed", `document.body.textContent.includes('Purged 7 records')`)
	if h, f := sums("orders"); h != 7 || f != 7 {
		t.Fatalf("orders after the purge: frontier %d of %d", f, h)
	}

	// Cluster and users (admin pages).
	b.open("#/cluster")
	b.until("this node listed as leader", has(`table[data-table=members] tr[data-row="node-1"]`)+` && document.querySelector('[data-stat=leader]').textContent === "node-1"`)
	b.shot("cluster")
	b.open("#/users")
	b.until("the users listed", has(`table[data-table=users] tr[data-row="admin"]`)+" && "+has(`table[data-table=users] tr[data-row="reader"]`))
	b.shot("users")

	// Narrow and dark.
	b.run("narrow and dark", chromedp.EmulateViewport(400, 900),
		media("dark"))
	b.open("#/topics/orders")
	b.until("the topic page, narrow", `document.querySelectorAll('table[data-table=partitions] tbody tr').length === 3`)
	if b.scrollsSideways() {
		t.Errorf("at 400 px the page scrolls sideways (tables scroll inside their own box)")
	}
	b.shot("topic-narrow-dark")
	b.run("wide and light", chromedp.EmulateViewport(1400, 900), media(""))

	// A user without the grants: every action refused, and the UI says 403.
	b.run("sign out", chromedp.Click(chromedp.CSS("#logout")))
	b.until("signed out", has("form[data-form=login]"))
	signIn("reader", readerPass)
	b.run("create as reader",
		chromedp.Click(chromedp.CSS("details.card summary")),
		chromedp.SetValue(chromedp.CSS("#create-name"), "not-allowed"),
		submit("form[data-form=create-topic]"))
	b.until("create refused with 403", refused)
	b.open("#/topics/orders")
	b.until("the topic page as reader", has("#set-retention_ms"))
	b.run("edit retention as reader",
		chromedp.SetValue(chromedp.CSS("#set-retention_ms"), "3600000"),
		submit("form[data-form=settings]"))
	b.until("retention edit refused with 403", refused)
	b.run("purge as reader", chromedp.Click(chromedp.CSS("button[data-action=purge]")),
		chromedp.WaitVisible(chromedp.CSS(".confirm button[data-action=confirm]")),
		chromedp.Click(chromedp.CSS(".confirm button[data-action=confirm]")))
	b.until("purge refused with 403", `document.querySelectorAll('.problem[data-status="403"]').length === 2`)
	b.shot("refused")
	b.open("#/topics/orders/produce")
	b.run("produce as reader", chromedp.WaitVisible(chromedp.CSS("#produce-payload")),
		submit("form[data-form=produce]"))
	b.until("produce refused with 403", refused)
	b.open("#/dead-letters")
	b.until("the dead-letter card as reader", has(`[data-dlq="orders-dlq"] button[data-action=redrive]`))
	b.run("redrive as reader", chromedp.Click(chromedp.CSS(`[data-dlq="orders-dlq"] button[data-action=redrive]`)))
	b.until("redrive refused with 403", refused)
	b.open("#/users")
	b.until("users refused with 403", refused)
	if got := describe("orders").RetentionMs; got != 7_200_000 {
		t.Fatalf("the reader's refused edit changed retention to %d", got)
	}
	if a := asUser(t, n, admin, rootPass, "GET", "/v1/topics/not-allowed", nil); a.status != http.StatusNotFound {
		t.Fatalf("the reader's refused create: %d", a.status)
	}

	// The node goes away: the banner says so.
	b.open("#/topics")
	b.until("the topics page", has(`tr[data-row="orders"]`))
	n.kill()
	b.until("the unreachable banner", `document.querySelector('#banner[data-kind="unreachable"]') !== null && !document.querySelector('#banner').hidden`)
	b.shot("unreachable")
	t.Logf("screenshots in %s", strings.Join(b.shots, " and "))
}
