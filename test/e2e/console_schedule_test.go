package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The console and the queue semantics of issue 27, in a real browser
// (the same harness as TestConsoleInABrowser): a topic created with a
// delivery delay and group ordering; a record produced with Narad-Delay
// from the produce page, then seen as scheduled on the topic page and
// with its due time (and id, where the node gives one) in the message
// browser; the delivery delay and ordering edited in the settings; a
// filtered child's filter and filtered count shown, a malformed filter
// refused with the node's own 400, and the filter changed and removed by
// hand.
func TestConsoleSchedulingAndFiltersInABrowser(t *testing.T) {
	n := startSecureNode(t)
	const admin = "admin"
	root := asRoot(t, n)
	describe := func(topic string) map[string]any {
		t.Helper()
		var d map[string]any
		if err := json.Unmarshal(root("GET", "/v1/topics/"+topic, nil).body, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	type child struct {
		Name     string         `json:"name"`
		Filter   map[string]any `json:"filter"`
		Scope    string         `json:"filter_scope"`
		Filtered int64          `json:"filtered"`
	}
	link := func() child {
		t.Helper()
		var d struct {
			Children []child `json:"children"`
		}
		if err := json.Unmarshal(root("GET", "/v1/topics/plans/children", nil).body, &d); err != nil || len(d.Children) != 1 {
			t.Fatalf("children of plans: %v %+v", err, d)
		}
		return d.Children[0]
	}
	// A parent whose child copies only the EU records (matched on the
	// payload), and two records, one the filter skips.
	root("POST", "/v1/topics", map[string]any{"name": "plans", "partitions": 1})
	root("POST", "/v1/topics", map[string]any{"name": "plans-eu", "parent": "plans",
		"fanout_filter": map[string]any{"region": []string{"eu"}}, "fanout_filter_scope": "payload"})
	root("POST", "/v1/topics/plans/produce", []byte(`{"region":"us"}`))
	root("POST", "/v1/topics/plans/produce", []byte(`{"region":"eu"}`))
	if o := describe("plans")["ordering"]; o != "none" {
		t.Fatalf("a topic created without ordering reports ordering %v, want none", o)
	}
	eventually(t, 20*time.Second, "the link steps over the US record", func() bool { return link().Filtered >= 1 })

	b := newBrowser(t, "http://"+n.http)
	b.open("#/login")
	b.signIn(admin, rootPass)
	b.until("the topics page", has(`tr[data-row="plans"]`))

	// Create: a delivery delay given as a duration, and ordering.
	b.run("create a delayed topic",
		chromedp.Click(chromedp.CSS("details.card summary")),
		chromedp.SetValue(chromedp.CSS("#create-name"), "later"),
		chromedp.SetValue(chromedp.CSS("#create-delivery-delay"), "15m"),
		chromedp.SetValue(chromedp.CSS("#create-ordering"), "group"),
		submit("form[data-form=create-topic]"))
	b.until("the create is confirmed", has("form[data-form=create-topic] ~ div .ok"))
	b.until("the new topic listed as grouped and delayed", `document.querySelector('tr[data-row="later"] [data-badge=grouped]') && document.querySelector('tr[data-row="later"] [data-badge=delayed]').textContent === "delay 15m"`)
	d := describe("later")
	if d["delivery_delay_ms"] != float64(900_000) {
		t.Errorf("the topic created with a 15m delivery delay has delivery_delay_ms %v", d["delivery_delay_ms"])
	}
	if d["ordering"] != "group" {
		t.Errorf("the topic created with group ordering has ordering %v", d["ordering"])
	}

	// Produce a record due in an hour from the produce page.
	b.open("#/topics/plans/produce")
	b.run("produce a scheduled record",
		chromedp.WaitVisible(chromedp.CSS("#produce-payload")),
		chromedp.SetValue(chromedp.CSS("#produce-delay"), "1h"),
		chromedp.SetValue(chromedp.CSS("#produce-payload"), `{"plan":"later"}`),
		submit("form[data-form=produce]"))
	b.until("the scheduled produce accepted", `document.querySelector("form[data-form=produce] .ok").textContent.includes("scheduled")`)
	// A consumer touches the partition (so it counts what is scheduled)
	// and is offered the two records due, not the scheduled one.
	var got struct {
		Messages []struct {
			Offset int `json:"offset"`
		} `json:"messages"`
	}
	json.Unmarshal(root("GET", "/v1/topics/plans/consume?max=10", nil).body, &got)
	if len(got.Messages) != 2 {
		t.Fatalf("consume of plans offered %d records, want the 2 due ones: %+v", len(got.Messages), got)
	}
	type record struct {
		Offset    int    `json:"offset"`
		DeliverAt int64  `json:"deliver_at"`
		ID        string `json:"id"`
	}
	var replayed struct {
		Messages []record `json:"messages"`
	}
	if err := json.Unmarshal(root("GET", "/v1/topics/plans/consume?partition=0&offset=2&max=1", nil).body, &replayed); err != nil || len(replayed.Messages) != 1 || replayed.Messages[0].Offset != 2 {
		t.Fatalf("replay of plans at offset 2: %v %+v", err, replayed)
	}
	replay := replayed.Messages[0]
	if late := replay.DeliverAt - time.Now().UnixMilli(); late < 50*60*1000 || late > 61*60*1000 {
		t.Fatalf("the record produced with a 1h delay has deliver_at %d (%d ms from now)", replay.DeliverAt, late)
	}

	// The topic page: scheduled per partition and in all.
	b.open("#/topics/plans")
	b.until("one scheduled on partition 0", `document.querySelector('table[data-table=partitions] tbody tr:first-child [data-scheduled]').dataset.scheduled === "1"`)
	b.until("one scheduled in all", `document.querySelector('[data-fact=scheduled]').textContent === "1"`)

	// The child: its filter, scope and filtered count.
	row := `table[data-table=children] tr[data-row="plans-eu"]`
	b.until("the child's filter shown", fmt.Sprintf(`document.querySelector('%s [data-filter=set] pre').textContent.includes('"eu"') && document.querySelector('%s [data-scope]').dataset.scope === "payload"`, row, row))
	b.until("the child's filtered count", fmt.Sprintf(`Number(document.querySelector('%s [data-filtered]').dataset.filtered) >= 1`, row))
	b.until("the graph says the link filters", `document.querySelector('svg[data-graph=children]').textContent.includes('filter')`)
	b.shot("topic-scheduled")

	// A malformed filter: the node's 400, said on the page; nothing changed.
	b.run("open the filter editor", chromedp.Click(chromedp.CSS(row+" button[data-action=edit-filter]")))
	b.until("the filter editor", has(`form[data-form=child-filter][data-child="plans-eu"] #filter-json`))
	b.run("a malformed filter",
		chromedp.SetValue(chromedp.CSS("#filter-json"), `{"price": [{"numeric": [">"]}]}`),
		submit("form[data-form=child-filter]"))
	b.until("the node's 400 shown", `document.querySelector('form[data-form=child-filter] .problem[data-status="400"]').textContent.includes('filter')`)
	if c := link(); c.Filter["region"] == nil || c.Scope != "payload" {
		t.Fatalf("the refused filter changed the link: %+v", c)
	}
	b.shot("filter-refused")
	// A good one, matching headers now.
	b.run("a new filter",
		chromedp.SetValue(chromedp.CSS("#filter-json"), `{"region": [{"prefix": "eu-"}]}`),
		chromedp.SetValue(chromedp.CSS("#filter-scope"), "headers"),
		submit("form[data-form=child-filter]"))
	b.until("the new filter saved and shown", has(`[data-section=child-filter] .ok`)+fmt.Sprintf(` && document.querySelector('%s [data-filter=set] pre').textContent.includes('prefix') && document.querySelector('%s [data-scope]').dataset.scope === "headers"`, row, row))
	if c := link(); c.Scope != "headers" || !strings.Contains(fmt.Sprint(c.Filter["region"]), "prefix") {
		t.Fatalf("the link after the console's filter edit: %+v", c)
	}
	// And removed.
	b.run("edit again", chromedp.Click(chromedp.CSS(row+" button[data-action=edit-filter]")))
	b.until("the remove button", has("form[data-form=child-filter] button[data-action=clear-filter]"))
	b.run("remove the filter", chromedp.Click(chromedp.CSS("form[data-form=child-filter] button[data-action=clear-filter]")))
	b.until("the filter gone", has(row+` [data-filter=none]`))
	if c := link(); c.Filter != nil {
		t.Fatalf("the link still has a filter after the console removed it: %+v", c)
	}

	// Settings: the delivery delay (and ordering) edited.
	b.run("set a delivery delay", chromedp.SetValue(chromedp.CSS("#set-delivery_delay_ms"), "60000"))
	b.until("ordering none shown", `document.querySelector('[data-fact=ordering]').textContent === "none" && document.querySelector('#set-ordering').value === "none"`)
	b.run("set group ordering", chromedp.SetValue(chromedp.CSS("#set-ordering"), "group"))
	b.run("save the settings", submit("form[data-form=settings]"))
	b.until("the settings saved", has("form[data-form=settings] ~ div .ok"))
	d = describe("plans")
	if d["delivery_delay_ms"] != float64(60_000) {
		t.Errorf("delivery_delay_ms after the console's edit: %v", d["delivery_delay_ms"])
	}
	if d["ordering"] != "group" {
		t.Errorf("ordering after the console's edit: %v", d["ordering"])
	}
	b.until("the ordering shown", `document.querySelector('[data-fact=ordering]').textContent === "by message group"`)
	b.until("the delivery delay shown", `document.querySelector('[data-fact=delivery-delay]').dataset.ms === "60000"`)

	// The message browser: the scheduled record's due time, and its id
	// where the node gives one.
	b.open("#/topics/plans/messages?p=0&o=0")
	b.until("three records", `document.querySelectorAll('table[data-table=messages] tbody tr[data-row]').length === 3`)
	b.until("the due time of the scheduled record", fmt.Sprintf(`document.querySelector('tr[data-row="2"] [data-due-ms]').dataset.dueMs === "%d" && /due in (59|60) min/.test(document.querySelector('tr[data-row="2"] .due').textContent)`, replay.DeliverAt))
	b.until("no due time on a record due at once", `!document.querySelector('tr[data-row="0"] [data-due-ms]')`)
	if replay.ID != "" {
		b.until("the message id", fmt.Sprintf(`document.querySelector('tr[data-row="2"] [data-id]').textContent === %q`, replay.ID))
	}
	b.shot("messages-scheduled")

	// Narrow and dark, with the filter editor open.
	b.run("narrow and dark", chromedp.EmulateViewport(400, 900), media("dark"))
	b.open("#/topics/plans")
	b.until("the child listed, narrow", has(row+" button[data-action=edit-filter]"))
	b.run("open the editor, narrow", chromedp.Click(chromedp.CSS(row+" button[data-action=edit-filter]")))
	b.until("the editor, narrow", has("#filter-json"))
	if b.scrollsSideways() {
		t.Errorf("at 400 px the topic page with the filter editor scrolls sideways")
	}
	b.shot("filter-narrow-dark")
}
