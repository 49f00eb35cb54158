package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/narad-io/narad/internal/duration"
)

// The console's access keys, in a real browser against a secured node
// (the harness of TestConsoleInABrowser): an admin creates a user and a
// key for it on the users page; the secret is shown once, in its box,
// and once the box is dismissed the page holds it nowhere (DOM, storage,
// URL) while the key stays listed; the API's own list agrees; a third
// key is refused with the node's 409; a revoke removes the key from the
// page and the API. The user itself, no admin, sees only its own keys.
// The sign-in page offers no "Sign out".
// signOutShown is a JS expression: the header's "Sign out" is on screen
// (its hidden attribute alone is not enough: a style may override it).
const signOutShown = `document.querySelector('#logout').checkVisibility()`

func TestConsoleAccessKeysInABrowser(t *testing.T) {
	n := startSecureNode(t)
	const billingPass = "billing-password-1"
	keysOf := func(user string) []string {
		t.Helper()
		var d struct {
			Keys []struct {
				ID      string `json:"access_key_id"`
				Created int64  `json:"created_at"`
			} `json:"access_keys"`
		}
		a := asRoot(t, n)("GET", "/v1/users/"+user+"/access-keys", nil)
		if err := json.Unmarshal(a.body, &d); err != nil {
			t.Fatalf("%s: %v", a.body, err)
		}
		var ids []string
		for _, k := range d.Keys {
			if k.Created == 0 {
				t.Errorf("key %s of %s has no creation time", k.ID, user)
			}
			ids = append(ids, k.ID)
		}
		return ids
	}

	b := newBrowser(t, "http://"+n.http)
	b.open("#/users")
	b.until("the sign-in page, for the users page", has("form[data-form=login]"))
	b.until("no Sign out on the sign-in page", "!"+signOutShown)
	b.signIn("admin", rootPass)
	b.until("the users page after sign-in", has(`table[data-table=users] tr[data-row="admin"]`))
	b.until("Sign out offered", signOutShown)

	// The admin creates a user, then a key for it.
	b.run("create a user",
		chromedp.Click(chromedp.CSS("details.card summary")),
		chromedp.SetValue(chromedp.CSS("#user-name"), "billing"),
		chromedp.SetValue(chromedp.CSS("#user-password"), billingPass),
		submit("form[data-form=create-user]"))
	b.until("the user listed, with no keys", has(`[data-keys="billing"]`)+` && document.querySelector('[data-keys="billing"]').textContent.includes('No access keys')`)
	b.run("create a key", chromedp.Click(chromedp.CSS(`[data-keys="billing"] button[data-action=create-key]`)))
	b.until("the new key's box", has(`[data-box=new-key][data-user="billing"] [data-secret]`))
	box := func(sel string) string {
		return b.text(`[data-box=new-key] ` + sel)
	}
	id, secret := box("[data-key-id]"), box("[data-secret]")
	if !strings.HasPrefix(id, "NKIA") || len(secret) < 20 {
		t.Fatalf("the box shows key %q and secret %q", id, secret)
	}
	if w := box(".warn"); w != "This secret is shown once: store it now. Narad keeps it encrypted and never shows it again." {
		t.Errorf("the box says %q", w)
	}
	if got := keysOf("billing"); len(got) != 1 || got[0] != id {
		t.Fatalf("the API lists %v, the console showed %s", got, id)
	}
	b.until("the key listed beside the box", has(fmt.Sprintf(`[data-keys="billing"] li[data-key=%q]`, id)))
	stored := fmt.Sprintf(`(JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + location.href + document.cookie).includes(%q)`, secret)
	inDOM := fmt.Sprintf(`document.documentElement.outerHTML.includes(%q) || document.body.innerText.includes(%q)`, secret, secret)
	b.until("the secret in no storage nor URL", "!("+stored+")")
	b.shot("users-new-key")
	b.run("copy the secret", chromedp.Click(chromedp.CSS(`[data-action=copy-secret]`)))
	b.until("the copy said", `/Cop|Selected/.test(document.querySelector('[data-box=new-key] [role=status]').textContent)`)

	// Dismissed: gone from the page, across a refresh too; the key stays.
	b.run("dismiss the box", chromedp.Click(chromedp.CSS(`[data-action=dismiss-key]`)))
	b.until("the box gone", `!document.querySelector('[data-box=new-key]')`)
	b.until("the secret gone from the page", "!("+inDOM+") && !("+stored+")")
	time.Sleep(3500 * time.Millisecond) // one poll of the page: it must not bring the secret back
	b.until("the key still listed, no secret", has(fmt.Sprintf(`[data-keys="billing"] li[data-key=%q]`, id))+" && !("+inDOM+")")

	// A second key, then a third: the node refuses it (2 at most), and
	// the page says so in the node's words.
	b.run("a second key", chromedp.Click(chromedp.CSS(`[data-keys="billing"] button[data-action=create-key]`)))
	b.until("the second key's box", has(`[data-box=new-key] [data-secret]`))
	second := box("[data-key-id]")
	b.run("dismiss the second box", chromedp.Click(chromedp.CSS(`[data-action=dismiss-key]`)))
	b.run("a third key", chromedp.Click(chromedp.CSS(`[data-keys="billing"] button[data-action=create-key]`)))
	b.until("the third refused with 409", `document.querySelector('[data-section=key-error] .problem[data-status="409"]') !== null`)
	if got := keysOf("billing"); len(got) != 2 {
		t.Fatalf("after the refused third key the API lists %v", got)
	}

	// Revoke the first, after the confirmation.
	row := fmt.Sprintf(`[data-keys="billing"] li[data-key=%q]`, id)
	b.run("revoke", chromedp.Click(chromedp.CSS(row+` button[data-action=revoke-key]`)))
	b.until("the revoke's confirmation", has(row+` .confirm button[data-action=confirm]`))
	if got := keysOf("billing"); len(got) != 2 {
		t.Fatalf("revoked before the confirmation: the API lists %v", got)
	}
	b.run("confirm the revoke", chromedp.Click(chromedp.CSS(row+` .confirm button[data-action=confirm]`)))
	b.until("the revoked key gone from the page", "!("+has(row)+") && "+has(fmt.Sprintf(`[data-keys="billing"] li[data-key=%q]`, second)))
	if got := keysOf("billing"); len(got) != 1 || got[0] != second {
		t.Fatalf("after the revoke of %s the API lists %v, want only %s", id, got, second)
	}

	// The user itself, no admin: its own keys, nobody else's.
	asRoot(t, n)("POST", "/v1/users/admin/access-keys", nil)
	b.run("sign out", chromedp.Click(chromedp.CSS("#logout")))
	b.until("signed out", has("form[data-form=login]"))
	b.signIn("billing", billingPass)
	b.until("signed in as billing", `document.querySelector('#who').textContent === 'Signed in as billing'`)
	b.open("#/users")
	b.until("its own key", has(fmt.Sprintf(`[data-section=my-keys] [data-keys="billing"] li[data-key=%q]`, second)))
	b.until("the user list refused, no one else's keys", refused+` && document.querySelectorAll('[data-keys]').length === 1`)
	b.shot("users-own-keys")
	b.open("#/login")
	b.until("the sign-in page", has("form[data-form=login]"))
	b.until("no Sign out on the sign-in page, signed in or not", "!"+signOutShown)
}

// With security off (developer mode) the console says so: the users page
// explains there is nobody to manage and how to turn security on, and
// no page offers "Sign out", even to a tab holding credentials. Durations
// read as the CLI prints them: the console's formatter against
// internal/duration's, and a week's retention on the topic pages.
func TestConsoleSecurityOffAndDurationsInABrowser(t *testing.T) {
	n := startNode(t)
	if a := asUser(t, n, "", "", "POST", "/v1/topics", map[string]any{"name": "week", "partitions": 1, "retention_ms": 604800000}); a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	b := newBrowser(t, "http://"+n.http)
	b.open("#/users")
	b.until("the security-off notice", has("[data-notice=security-off]"))
	notice := b.text("[data-notice=security-off]")
	for _, want := range []string{"Security is off", "security.enabled", "docs/security.md"} {
		if !strings.Contains(notice, want) {
			t.Errorf("the notice %q does not say %q", notice, want)
		}
	}
	if main := b.text("main"); strings.Contains(main, "Nothing here") {
		t.Errorf("the users page with security off says %q", main)
	}
	b.until("no Sign out", "!"+signOutShown+` && document.querySelector('#who').textContent === 'Security off'`)
	b.shot("users-security-off")
	b.until("a tab holding credentials", `(sessionStorage.setItem('narad.console.credentials', JSON.stringify({user: 'someone', password: 'pw'})), true)`)
	b.run("reload", chromedp.Reload())
	b.until("still no Sign out", has("[data-notice=security-off]")+" && !"+signOutShown)

	// The formatter, value by value against the CLI's, and back.
	values := []int64{0, 1, 250, 999, 1000, 1001, 1500, 30000, 45000, 59999, 60000, 90000, 3600000, 3600500,
		5400000, 43200000, 86400000, 129600000, 604800000, 31536000000, -5400000}
	js, _ := json.Marshal(values)
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`import('/console/ui.js').then((m) => JSON.stringify(`+string(js)+`.map((v) => {
		let back;
		try { back = m.parseDuration(m.duration(v)); } catch (e) { back = e.message; }
		return [m.duration(v), back];
	})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(values) {
		t.Fatalf("the console's durations: %s (%v)", out, err)
	}
	for i, v := range values {
		if want := duration.Format(time.Duration(v) * time.Millisecond); got[i][0] != want {
			t.Errorf("duration(%d) = %v, the CLI prints %q", v, got[i][0], want)
		}
		if back, ok := got[i][1].(float64); !ok || int64(back) != v {
			t.Errorf("parseDuration(duration(%d)) = %v", v, got[i][1])
		}
	}

	// A week's retention, as the topics list, the topic and its settings
	// show it; a duration typed in the settings is saved as milliseconds.
	b.open("#/topics")
	b.until("the topics list shows 7d", `document.querySelector('tr[data-row="week"] td:nth-child(8)').textContent === "7d"`)
	b.open("#/topics/week")
	b.until("the topic shows 7d", `[...document.querySelectorAll('.facts div')].some((d) => d.textContent === "Retention7d") && document.querySelector('#set-retention_ms').value === "7d"`)
	b.until("the visibility timeout as a duration", `document.querySelector('#set-visibility_timeout_ms').value === "30s"`)
	b.run("set retention to 1d12h",
		chromedp.SetValue(chromedp.CSS("#set-retention_ms"), "1d12h"),
		submit("form[data-form=settings]"))
	b.until("the settings saved", has("form[data-form=settings] ~ div .ok"))
	var d struct {
		RetentionMs int64 `json:"retention_ms"`
	}
	json.Unmarshal(asUser(t, n, "", "", "GET", "/v1/topics/week", nil).body, &d)
	if d.RetentionMs != 129_600_000 {
		t.Fatalf("retention after typing 1d12h: %d ms", d.RetentionMs)
	}
	b.run("a malformed duration",
		chromedp.SetValue(chromedp.CSS("#set-retention_ms"), "a week"),
		submit("form[data-form=settings]"))
	b.until("refused in the page", `document.querySelector('form[data-form=settings] ~ div .problem').textContent.includes('not a duration')`)
}
