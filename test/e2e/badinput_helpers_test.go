package e2e

// Helpers shared by the badinput_*_test.go files: raw requests that never
// follow redirects, the assertion on the error shape every 4xx must have,
// and the "nothing changed" probes (topic list, describe, high watermarks,
// a per-partition commit fence, the data directory tree).
//
// Every identifier here starts with "bi" so that the files stay out of the
// way of the other e2e files in the package.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// biHTTP never follows redirects: a 3xx is an answer to be asserted, not
// something to hide behind a second request.
var biHTTP = &http.Client{
	Timeout:       60 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// biAnswer is one HTTP answer.
type biAnswer struct {
	status int
	body   []byte
	hdr    http.Header
	what   string // "METHOD path", for messages
}

func (a biAnswer) String() string {
	b := string(a.body)
	if len(b) > 300 {
		b = b[:300] + "..."
	}
	return fmt.Sprintf("%s -> %d %q", a.what, a.status, b)
}

// biDo sends a request with a known Content-Length. path is sent as given
// (already escaped), so "%2F" and dot segments reach the server unchanged.
func biDo(t testing.TB, n *node, method, path, contentType string, body []byte) biAnswer {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	return biSend(t, n, method, path, contentType, r)
}

// biDoChunked sends the body with no Content-Length (chunked), so a server
// cannot decide on the declared size and must count what it reads.
func biDoChunked(t testing.TB, n *node, method, path, contentType string, body []byte) biAnswer {
	t.Helper()
	return biSend(t, n, method, path, contentType, io.MultiReader(bytes.NewReader(body)))
}

func biSend(t testing.TB, n *node, method, path, contentType string, body io.Reader) biAnswer {
	t.Helper()
	req, err := http.NewRequest(method, n.url(path), body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := biHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return biAnswer{status: resp.StatusCode, body: b, hdr: resp.Header, what: method + " " + path}
}

// biWantError asserts the answer is exactly status with the error shape of
// docs/http-api.md: Content-Type application/json, a body that is one JSON
// object {"error": "<non-empty sentence>"} and nothing else, Retry-After on
// a 503. Each of contains must occur in the sentence. It returns the
// sentence.
func biWantError(t testing.TB, a biAnswer, status int, contains ...string) string {
	t.Helper()
	if a.status != status {
		t.Fatalf("want %d: %v", status, a)
	}
	ct := a.hdr.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		t.Errorf("error answer has Content-Type %q, want application/json: %v", ct, a)
	}
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("error body is not a JSON object (%v): %v", err, a)
	}
	msg, ok := m["error"].(string)
	if !ok || strings.TrimSpace(msg) == "" {
		t.Fatalf(`error body has no non-empty "error" string: %v`, a)
	}
	var named int
	if _, err := fmt.Sscanf(msg, "record %d: ", &named); err == nil && strings.HasSuffix(a.what, "/produce/batch") {
		if _, has := m["index"]; !has {
			t.Errorf(`batch error names record %d but has no "index": %v`, named, a)
		}
	}
	if idx, has := m["index"]; has && strings.HasSuffix(a.what, "/produce/batch") {
		// Batch produce names the refused record beside the sentence too
		// (a backwards-compatible field): the same index the sentence names.
		i, isNum := idx.(float64)
		if !isNum || i < 0 || i != float64(int(i)) || !strings.HasPrefix(msg, fmt.Sprintf("record %d: ", int(i))) {
			t.Errorf(`batch error "index" %v does not match its sentence: %v`, idx, a)
		}
		delete(m, "index")
	}
	if len(m) != 1 {
		t.Errorf(`error body has fields besides "error": %v`, a)
	}
	if status == http.StatusServiceUnavailable {
		if s, err := strconv.Atoi(a.hdr.Get("Retry-After")); err != nil || s < 1 {
			t.Errorf("503 without a valid Retry-After (%q): %v", a.hdr.Get("Retry-After"), a)
		}
	}
	for _, c := range contains {
		if !strings.Contains(msg, c) {
			t.Errorf("error %q does not mention %q (%s)", msg, c, a.what)
		}
	}
	return msg
}

// biWantStatus asserts a success status.
func biWantStatus(t testing.TB, a biAnswer, status int) {
	t.Helper()
	if a.status != status {
		t.Fatalf("want %d: %v", status, a)
	}
}

// biKnownBug fails the test when the server gives an answer that
// contradicts the spec (these once were real bugs; they stay as guards).
func biKnownBug(t testing.TB, buggy bool, format string, args ...any) {
	t.Helper()
	if buggy {
		t.Fatal("server contradicts the spec: " + fmt.Sprintf(format, args...))
	}
}

// biJSON marshals v or fails.
func biJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// biListRaw is the whole topic list as the server answers it.
func biListRaw(t testing.TB, n *node) string {
	t.Helper()
	a := biDo(t, n, "GET", "/v1/topics?limit=1000", "", nil)
	biWantStatus(t, a, http.StatusOK)
	return string(a.body)
}

// biDescribeRaw is one topic's describe answer, verbatim.
func biDescribeRaw(t testing.TB, n *node, topic string) string {
	t.Helper()
	a := biDo(t, n, "GET", "/v1/topics/"+topic, "", nil)
	biWantStatus(t, a, http.StatusOK)
	return string(a.body)
}

// biAbsent asserts a (valid) topic name does not exist.
func biAbsent(t testing.TB, n *node, topic string) {
	t.Helper()
	biWantError(t, biDo(t, n, "GET", "/v1/topics/"+topic, "", nil), http.StatusNotFound, "does not exist")
}

type biStats struct {
	Name           string `json:"name"`
	Partitions     int    `json:"partitions"`
	PartitionStats []struct {
		Index            int     `json:"index"`
		Segments         *int    `json:"segments"`
		HighWatermark    *uint64 `json:"high_watermark"`
		ConsumerFrontier *uint64 `json:"consumer_frontier"`
	} `json:"partition_stats"`
}

func biDescribe(t testing.TB, n *node, topic string) biStats {
	t.Helper()
	var s biStats
	if err := json.Unmarshal([]byte(biDescribeRaw(t, n, topic)), &s); err != nil {
		t.Fatalf("describe %s: %v", topic, err)
	}
	if len(s.PartitionStats) != s.Partitions {
		t.Fatalf("describe %s: %d partition_stats for %d partitions", topic, len(s.PartitionStats), s.Partitions)
	}
	for i, ps := range s.PartitionStats {
		if ps.Index != i || ps.HighWatermark == nil || ps.ConsumerFrontier == nil {
			t.Fatalf("describe %s: partition_stats[%d] incomplete", topic, i)
		}
		// A log always has its active segment, from the partition's
		// creation on (the reference creates it with the partition).
		if ps.Segments == nil || *ps.Segments < 1 {
			t.Fatalf("describe %s: partition_stats[%d] shows segments %v, want at least 1", topic, i, ps.Segments)
		}
	}
	return s
}

// biHWMs is each partition's high watermark.
func biHWMs(t testing.TB, n *node, topic string) []uint64 {
	t.Helper()
	s := biDescribe(t, n, topic)
	out := make([]uint64, len(s.PartitionStats))
	for i, ps := range s.PartitionStats {
		out[i] = *ps.HighWatermark
	}
	return out
}

// biFrontiers is each partition's consumer frontier.
func biFrontiers(t testing.TB, n *node, topic string) []uint64 {
	t.Helper()
	s := biDescribe(t, n, topic)
	out := make([]uint64, len(s.PartitionStats))
	for i, ps := range s.PartitionStats {
		out[i] = *ps.ConsumerFrontier
	}
	return out
}

// biWaitHWMs waits until every partition's high watermark equals want
// (accepted produces are durable at 202 and become visible when the
// dispatcher commits them).
func biWaitHWMs(t testing.TB, n *node, topic string, want []uint64) {
	t.Helper()
	var got []uint64
	eventually(t, 10*time.Second, fmt.Sprintf("high watermarks of %s to reach %v", topic, want), func() bool {
		got = biHWMs(t, n, topic)
		return slices.Equal(got, want)
	})
}

// biFence proves that nothing was stored since before was taken. It
// produces one marker record pinned to every partition, waits until each
// partition shows it, and asserts each partition grew by exactly one.
// Records of one partition commit in the order they were accepted, so a
// record accepted before the fence would show as a second new record on
// its partition. It returns the new high watermarks.
func biFence(t testing.TB, n *node, topic string, before []uint64) []uint64 {
	t.Helper()
	recs := make([]map[string]any, len(before))
	for p := range before {
		// {"id": p} also satisfies the schema the produce tests give a topic.
		recs[p] = map[string]any{"partition": p, "payload": map[string]any{"id": p, "fence": true}}
	}
	a := biDo(t, n, "POST", "/v1/topics/"+topic+"/produce/batch", "application/json",
		biJSON(t, map[string]any{"records": recs}))
	biWantStatus(t, a, http.StatusAccepted)
	var got []uint64
	eventually(t, 10*time.Second, "the fence records of "+topic+" to commit", func() bool {
		got = biHWMs(t, n, topic)
		for p := range before {
			if got[p] <= before[p] {
				return false
			}
		}
		return true
	})
	for p := range before {
		if got[p] != before[p]+1 {
			t.Errorf("partition %d of %s grew from %d to %d: a refused request stored %d record(s)",
				p, topic, before[p], got[p], got[p]-before[p]-1)
		}
	}
	return got
}

// biDirs lists every directory under the node's data directory except the
// metastore's own (whose snapshots are not ours to predict). A topic name
// that escaped its directory would show here.
func biDirs(t testing.TB, n *node) []string {
	t.Helper()
	var out []string
	root := n.dir
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if rel == filepath.Join("data", "metastore") {
			return filepath.SkipDir
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
