package arch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/narad-io/narad"

// everything marks a row that may import every production package of
// ours (the wiring), but never a test helper.
const everything = "*"

// allowed is the table: package → the packages it may import in
// production code. Names are package paths without the module and the
// "internal/" prefix. Keep it in step with the architecture document's
// table.
var allowed = map[string][]string{
	// Leaves: nothing of ours.
	"apierr":     {"refusal"}, // refusal: typed refusals, mapped to statuses here (arrives with the seams work)
	"refusal":    {},
	"notify":     {},
	"clock":      {},
	"metrics":    {},
	"schema":     {},
	"clustertls": {},
	"vfs":        {},
	"peerauth":   {"netfault"}, // netfault: dialled peer connections pass through its test seam
	"netfault":   {},
	"reserve":    {},
	"client":     {},
	"rpc/proto":  {},
	"ratelimit":  {"clock"}, // the per-user token buckets, refilled from the injected clock
	"duration":   {},        // the one duration syntax: config, the API's parameters and the CLI's flags read it alike
	"lease":      {"clock"},
	"wal":        {"clock", "vfs", "header"},
	"datadir":    {"vfs"},
	// config validates the data-directory policy names, which datadir owns.
	// duration: its settings take the syntax the API and the CLI take.
	"config": {"datadir", "duration"},
	// filter: the SNS filter-policy matching engine of fan-out child
	// links (a record a link's filter does not match is not copied).
	// A leaf: it reads headers and payload bytes, nothing of ours.
	"filter": {},
	// header: what a record header is — its rules and its one binary
	// encoding, shared by the WAL record, the log's envelope, node RPC,
	// the broker's checks and the HTTP edge. A leaf.
	"header": {},
	// jsonenc: JSON written by appending, shared by the answers built
	// by hand (httpapi, fanout, awsapi). A leaf.
	"jsonenc": {},
	// schedule: the durable timer index of a partition's scheduled
	// records, files in the partition's directory. Below hosted.
	"schedule": {"vfs"},
	// messageid: how a record's message id is derived from what the log
	// holds (its WAL source, or its position). A leaf.
	"messageid": {},

	"storage": {"notify", "clock", "vfs", "header", "journal"}, // journal: a held log's writes made durable by the node's shared journal
	"journal": {"vfs"},
	"meta":    {"clustertls", "clock", "peerauth"},
	"auth":    {"meta", "refusal", "clock"},
	"route":   {"storage", "apierr", "clock"},
	"rpc":     {"storage", "apierr", "refusal", "clustertls", "peerauth", "rpc/proto", "header"}, // header: a peer's headers are checked against the stored caps
	// topic: a topic's record and partition resolution, shared by the broker
	// and fan-out (arrives with the fan-out work).
	"topic": {"meta", "storage", "refusal"}, // name rules refuse with typed refusals (invalid)
	// broker: replica, since a node's replicated partitions are its data plane too.
	// hosted: the partitions a node hosts (log, queue, dedupe window) and
	// the replication roles over them (placement from meta, the engine's
	// types from replica, the roles' gauges in metrics).
	"hosted":   {"storage", "lease", "clock", "vfs", "topic", "header", "refusal", "meta", "metrics", "replica", "schedule"},
	"broker":   {"storage", "wal", "journal", "lease", "meta", "schema", "metrics", "notify", "refusal", "clock", "vfs", "topic", "header", "replica", "hosted", "duration", "messageid"}, // duration: delivery_delay takes the API's one duration syntax
	"dispatch": {"wal", "route", "storage", "metrics", "clock", "refusal"},
	// fanout: vfs for the cursor file; client for the remote-link
	// Committer built on the public client. Never broker.
	// header: a remote child's copy maps reserved names (remotecommit.go).
	// filter: a child link copies only the records its filter matches.
	// awsattr: an enveloped link wraps a copy as SNS's notification, its
	// MessageId and MessageAttributes as the SQS/SNS edge reads them.
	"fanout":  {"route", "storage", "meta", "schema", "metrics", "clock", "vfs", "topic", "client", "refusal", "header", "filter", "messageid", "awsattr", "jsonenc"},
	"cluster": {"meta", "route", "storage", "metrics", "clock", "refusal"},
	// replica: keeping a replicated partition's copies in step (the
	// leader's in-sync set and committed point, the follower's fetch
	// loop); placement types from meta, the record type from storage.
	"replica": {"meta", "storage", "metrics", "clock", "refusal"},
	"move":    {"meta", "route", "storage", "metrics", "clock", "vfs", "refusal"},
	// httpapi: value types of broker, fanout and meta; behaviour only
	// through its own interfaces (an import graph cannot tell the two
	// apart, review does).
	// duration: the wait parameter's syntax.
	// header: the Narad-Header-* request headers and batch "headers" are
	// read into header.Header values at the edge.
	// ratelimit: the per-user buckets the edge takes from before a body is read.
	// history: the stats history's value types and its ring, which
	// GET /v1/topics/{topic}/stats/history answers.
	"httpapi": {"auth", "apierr", "refusal", "metrics", "schema", "lease", "broker", "fanout", "meta", "duration", "header", "ratelimit", "history", "jsonenc"},
	// awsattr: SQS/SNS message attributes as record headers (header's
	// names and the reserved header they use; jsonenc writes the Meta).
	"awsattr": {"header", "jsonenc"},
	// awsapi: the SQS and SNS protocol edge. It reaches the data plane
	// only through in-process /v1 requests (httpapi.AsUser, WithRecords),
	// so it adds no second path to it; value types of broker (a produce's
	// records), auth (the principal a signature proves) and header.
	// metrics: the edge's own request counts.
	"awsapi": {"httpapi", "auth", "broker", "awsattr", "header", "metrics", "jsonenc"},
	// history: the console's stats ring; it reads a topic's view (topic)
	// and ticks on the injected clock.
	"history": {"clock", "topic"},
	// console: embedded assets and the wrapper that serves them beside
	// the API; it imports nothing of ours (it talks to /v1 over HTTP only).
	"console": {},
	"server":  {everything},

	// duration: the flags' syntax (and its printing), shared with the server.
	// header: pub --header is held to the broker's header rules themselves,
	// so the CLI refuses exactly the names and values the API refuses.
	// jsonenc: bench --api sqs writes its request bodies by appending.
	"cmd/narad": {"client", "config", "server", "duration", "header", "jsonenc"},
	// Black-box tests: the public client, the on-disk formats (crash tests
	// read the files) and the node protocol (a stranger speaks it).
	// duration: the console's printer of durations is held to the CLI's
	// (duration.Format) in the browser.
	"test/e2e":  {"client", "storage", "rpc/proto", "duration"},
	"test/arch": {},
	// test/deploy: the dashboard and alerting rules test takes the
	// registry's names (metrics.Names) as what a query may select; the
	// Helm chart's and the Dockerfile's NARAD_* variables are checked
	// against the settings table (config.Settings), so a misspelt one
	// fails a test instead of being ignored by the node.
	"test/deploy": {"metrics", "config"},
	// Developer tools: standalone programs, nothing of ours.
	"scripts/mutate": {},
	// The produce yardstick of scripts/bench.sh: standard library only,
	// so it measures net/http and the disk, nothing of Narad.
	"scripts/ceiling": {},

	// Test helpers: imported only by _test.go files (see testHelpers).
	"testutil":      {},
	"vfs/errorfs":   {"vfs"},
	"meta/metatest": {"meta"},
}

// testHelpers may be imported by any package's tests, and by no
// production code. meta/metatest only by tests of packages that may
// import meta, since it is a meta.Store.
var testHelpers = []string{"testutil", "clock", "vfs", "vfs/errorfs"}

// testAllowed adds edges that only a package's tests may take.
var testAllowed = map[string][]string{
	// dispatch only copies a record's headers; its tests build some.
	"dispatch": {"header"},
	// broker's tests check the status each refusal gets at the edge
	// (apierr.From), as a client would see it.
	"broker": {"apierr"},
	// auth's tests too: a refused change is the status a client reads.
	"auth": {"apierr"},
}

// knownViolations are edges today's code has that the table refuses. Each
// is a debt to remove, not a precedent. The test fails when one is gone
// (delete its line then, so the list never hides a later return of the
// same edge); a production entry also covers the same edge in the
// package's tests, which often keep it a little longer.
var knownViolations = map[edge]string{
	// Production code.
	inTests("fanout", "broker"): "the fan-out integration harness runs a real broker as its log source",

	// Tests only.
	inTests("broker", "dispatch"): "ingress tests run the real dispatcher over the broker",
	inTests("broker", "route"):    "ingress tests commit through a real route.Local",
	inTests("fanout", "wal"):      "the fan-out harness builds a broker with a WAL",
	inTests("move", "broker"):     "the move tests run a real broker as source and destination",
	inTests("move", "wal"):        "the move tests build a broker with a WAL",
}

// known returns why e is a known violation: listed as is, or, for an
// edge of tests, listed for production code (whose tests often keep an
// edge a little longer).
func known(e edge) (string, bool) {
	if why, ok := knownViolations[e]; ok {
		return why, true
	}
	why, ok := knownViolations[prod(e.from, e.to)]
	return why, ok && e.test
}

// prod is an edge of production code; inTests one that only _test.go
// files take.
func prod(from, to string) edge    { return edge{from, to, false} }
func inTests(from, to string) edge { return edge{from, to, true} }

type edge struct {
	from, to string
	test     bool
}

func (e edge) String() string {
	s := e.from + " → " + e.to
	if e.test {
		s += " (tests)"
	}
	return s
}

type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func TestArrows(t *testing.T) {
	pkgs := listModule(t)
	edges := map[edge]bool{}
	for _, p := range pkgs {
		from := room(p.ImportPath)
		if _, ok := allowed[from]; !ok {
			t.Errorf("package %s has no row in the table of allowed imports: add one (a design decision) before adding the package", p.ImportPath)
			continue
		}
		for _, imp := range ours(p.Imports) {
			edges[edge{from, room(imp), false}] = true
		}
		for _, imp := range ours(append(p.TestImports, p.XTestImports...)) {
			if to := room(imp); to != from && !edges[edge{from, to, false}] {
				edges[edge{from, to, true}] = true
			}
		}
	}

	var bad []string
	for e := range edges {
		if permitted(e) {
			if why, ok := knownViolations[e]; ok {
				t.Errorf("%v is listed as a known violation (%s) but the table allows it: delete one of the two", e, why)
			}
			continue
		}
		if _, ok := known(e); !ok {
			bad = append(bad, e.String())
		}
	}
	sort.Strings(bad)
	for _, e := range bad {
		t.Errorf("import %s is not in the table of allowed edges: remove it, or make the design decision in the table first", e)
	}
	for e, why := range knownViolations {
		switch demoted := inTests(e.from, e.to); {
		case edges[e]:
		case !e.test && edges[demoted] && !permitted(demoted):
			// Production code is rid of it; its tests still take it.
			t.Logf("known violation %v is now only in tests: list it as inTests(%q, %q)", e, e.from, e.to)
		default:
			t.Errorf("known violation %v (%s) is gone: delete it from knownViolations", e, why)
		}
	}
	exists := map[string]bool{}
	for _, p := range pkgs {
		exists[room(p.ImportPath)] = true
	}
	for r := range allowed {
		if !exists[r] {
			t.Logf("table row %q names no package of the module (yet)", r)
		}
	}
}

// TestArrowsRefusesANewEdge proves the check is not vacuous: an edge that
// is neither allowed nor known is refused, and each kind of permission
// is honoured.
func TestArrowsRefusesANewEdge(t *testing.T) {
	cases := []struct {
		e    edge
		want bool
	}{
		{prod("storage", "broker"), false},           // upward
		{prod("fanout", "broker"), false},            // a known violation is still no permission
		{prod("storage", "testutil"), false},         // a test helper in production code
		{prod("server", "vfs/errorfs"), false},       // not even the wiring may
		{prod("server", "cluster"), true},            // the wiring
		{prod("server", "test/e2e"), false},          // the wiring imports no test
		{prod("broker", "lease"), true},              // a table row
		{prod("cmd/narad", "server"), true},          // a table row
		{prod("cmd/narad", "broker"), false},         // the CLI goes through server
		{prod("client", "apierr"), false},            // the public client imports nothing of ours
		{inTests("storage", "testutil"), true},       // any test may
		{inTests("httpapi", "wal"), true},            // below httpapi, through broker
		{inTests("fanout", "broker"), false},         // beside fan-out, not below it
		{inTests("storage", "meta"), false},          // above storage
		{inTests("storage", "meta/metatest"), false}, // only packages above meta
		{inTests("httpapi", "meta/metatest"), true},  // httpapi is above meta
	}
	for _, c := range cases {
		if got := permitted(c.e); got != c.want {
			t.Errorf("permitted(%v) = %v, want %v", c.e, got, c.want)
		}
	}
}

// permitted reports whether the table (not the violation list) allows e.
// Production code may import its row. Tests may also import the test
// helpers, and anything below the package — the packages its row
// reaches, directly or through theirs — so a test can build the real
// versions of what its package depends on, never of a package above or
// beside it.
func permitted(e edge) bool {
	if !e.test {
		if isTestHelper(e.to) {
			return false
		}
		row := allowed[e.from]
		if slices.Contains(row, everything) {
			_, known := allowed[e.to]
			return known && !strings.HasPrefix(e.to, "test/") && !strings.HasPrefix(e.to, "cmd/") && !strings.HasPrefix(e.to, "scripts/")
		}
		return slices.Contains(row, e.to)
	}
	switch {
	case slices.Contains(testHelpers, e.to):
		return true
	case e.to == "meta/metatest":
		// A meta.Store: only for tests of packages that sit above meta.
		return e.from == "meta" || below(e.from)["meta"]
	}
	return below(e.from)[e.to] || slices.Contains(testAllowed[e.from], e.to)
}

// below is every package r's production imports reach, transitively.
func below(r string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(from string) {
		for _, to := range allowed[from] {
			if to == everything {
				for all := range allowed {
					if !seen[all] && permitted(edge{from, all, false}) {
						seen[all] = true
						walk(all)
					}
				}
				continue
			}
			if !seen[to] {
				seen[to] = true
				walk(to)
			}
		}
	}
	walk(r)
	return seen
}

// isTestHelper: packages that exist for tests and never reach production.
func isTestHelper(r string) bool {
	return r == "testutil" || r == "vfs/errorfs" || r == "meta/metatest"
}

// room names a package of ours the way the table does.
func room(importPath string) string {
	r := strings.TrimPrefix(importPath, module+"/")
	return strings.TrimPrefix(r, "internal/")
}

func ours(imports []string) []string {
	var out []string
	for _, imp := range imports {
		if strings.HasPrefix(imp, module+"/") {
			out = append(out, imp)
		}
	}
	return out
}

// listModule runs go list over the whole module, from its root.
func listModule(t *testing.T) []listedPackage {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the arrow check runs go list, and no go command is on PATH: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; the check would be vacuous", len(pkgs))
	}
	return pkgs
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}
