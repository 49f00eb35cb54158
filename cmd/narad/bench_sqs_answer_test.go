package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/narad-io/narad/client"
)

// The node's own shapes, as it writes them (TestSQSAnswersOfARealNode
// checks that against a node), and near misses the readers must decline.
var sqsAnswerSeeds = []struct {
	body string
	read bool // by the shortcut
}{
	{`{}`, true},
	{`{"Messages":[]}`, true},
	{`{"Messages":[{"Body":"hello","MD5OfBody":"5d41402abc4b2a76b9719d911017c592","MessageId":"m1","ReceiptHandle":"h1"}]}`, true},
	{`{"Messages":[{"Body":"a","MessageId":"1","ReceiptHandle":"x"},{"Body":"b","MessageId":"2","ReceiptHandle":"y"}]}`, true},
	{`{"Messages":[{"Body":"a\"b","MessageId":"1","ReceiptHandle":"x"}]}`, false},
	{`{"Messages":[{"Attributes":{"SenderId":"s"},"Body":"a","MessageId":"1","ReceiptHandle":"x"}]}`, false},
	{`{"Messages":[{"Body":"é","MessageId":"1","ReceiptHandle":"x"}]}`, false},
	{`{"Messages":[{"Body":"a","MessageId":"1","MessageId":"2"}]}`, true},
	{`{"Messages":[{"Body":"a"}] }`, false},
	{`{"Messages":[{"Body":"a"},]}`, false},
	{`{"Messages":[{"Body":"a"}]}x`, false},
	{`{"Messages":[{"Body":7}]}`, false},
	{`{"Failed":[],"Successful":[]}`, true},
	{`{"Failed":[],"Successful":[{"Id":"0"},{"Id":"1"}]}`, true},
	{`{"Failed":[{"Code":"ReceiptHandleIsInvalid","Id":"0","SenderFault":true}],"Successful":[]}`, false},
	{`{"Failed":[],"Successful":[{"Id":"0","Other":"x"}]}`, true},
	{`{"Failed":[],"Successful":[{"Id":"0"}`, false},
	{`{"Failed":[],"Successful":[{"Id":"0","MD5OfMessageBody":"5d41402abc4b2a76b9719d911017c592","MessageId":"m0"}]}`, true},
	{`{"Failed":[],"Successful":[{"ID":"0"}]}`, false},
}

// Whatever the readers accept, encoding/json accepts too and reads the
// same: they are a shortcut, never a second grammar.
func FuzzSQSAnswersMatchEncodingJSON(f *testing.F) {
	for _, s := range sqsAnswerSeeds {
		f.Add([]byte(s.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast sqsReceived
		if readReceived(data, &fast) {
			var slow sqsReceived
			if err := json.Unmarshal(data, &slow); err != nil {
				t.Fatalf("readReceived took %q, which encoding/json refuses: %v", data, err)
			}
			if !sameReceived(fast, slow) {
				t.Fatalf("%q: readReceived %+v, encoding/json %+v", data, fast, slow)
			}
		}
		var fastDel sqsBatchResult
		if readBatchResult(data, &fastDel) {
			var slow sqsBatchResult
			if err := json.Unmarshal(data, &slow); err != nil {
				t.Fatalf("readBatchResult took %q, which encoding/json refuses: %v", data, err)
			}
			if len(slow.Failed) != 0 || !reflect.DeepEqual(fastDel.Successful, slow.Successful) && len(fastDel.Successful)+len(slow.Successful) > 0 {
				t.Fatalf("%q: readBatchResult %+v, encoding/json %+v", data, fastDel, slow)
			}
		}
	})
}

func sameReceived(a, b sqsReceived) bool {
	if len(a.Messages) != len(b.Messages) {
		return false
	}
	for i := range a.Messages {
		x, y := a.Messages[i], b.Messages[i]
		if x.MessageId != y.MessageId || x.ReceiptHandle != y.ReceiptHandle || !bytes.Equal(x.Body, y.Body) {
			return false
		}
	}
	return true
}

// The seeds that are the node's shapes are read by the shortcut; the
// near misses are declined (and left to encoding/json).
func TestSQSAnswerReadersTakeOnlyThePlainShape(t *testing.T) {
	for _, s := range sqsAnswerSeeds {
		var r sqsReceived
		var d sqsBatchResult
		if got := readReceived([]byte(s.body), &r) || readBatchResult([]byte(s.body), &d); got != s.read {
			t.Errorf("%s: read by the shortcut %v, want %v", s.body, got, s.read)
		}
	}
	var r sqsReceived
	if !readReceived([]byte(sqsAnswerSeeds[3].body), &r) || len(r.Messages) != 2 ||
		r.Messages[1].MessageId != "2" || r.Messages[1].ReceiptHandle != "y" || string(r.Messages[1].Body) != `"b"` {
		t.Fatalf("two messages read as %+v", r)
	}
}

// recordingTransport keeps the bodies of the answers it carries.
type recordingTransport struct {
	next   http.RoundTripper
	mu     sync.Mutex
	bodies map[string][]byte // by X-Amz-Target
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := rt.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	rt.bodies[req.Header.Get("X-Amz-Target")] = b
	rt.mu.Unlock()
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res, nil
}

// The answers a real node writes to the bench's batch send, receive and
// batch delete are the shape the shortcut reads: without that the bench would measure
// encoding/json again, silently.
func TestSQSAnswersOfARealNode(t *testing.T) {
	node, _ := realNode(t)
	key := adminKey(t, node)
	rt := &recordingTransport{next: http.DefaultTransport, bodies: map[string][]byte{}}
	s, err := newSQSData(node.env["NARAD_ADDR"], &http.Client{Transport: rt}, key.ID, key.Secret, "us-east-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.call(ctx, "CreateQueue", []byte(`{"QueueName":"answers"}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.open(ctx, "answers"); err != nil {
		t.Fatal(err)
	}
	recs := make([]client.BatchRecord, 3)
	for i := range recs {
		recs[i].Payload = json.RawMessage(`"record ` + string(rune('a'+i)) + `"`)
	}
	if n, err := s.produceBatch(ctx, "answers", recs); err != nil || n != 3 {
		t.Fatalf("produceBatch: %d %v", n, err)
	}
	if got := rt.bodies["AmazonSQS.SendMessageBatch"]; !readBatchResult(got, &sqsBatchResult{}) {
		t.Fatalf("the node's SendMessageBatch answer is not the shape the shortcut reads:\n%s", got)
	}
	var handles []string
	for len(handles) < 3 {
		msgs, err := s.consume(ctx, "answers", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			handles = append(handles, m.ReceiptHandle)
		}
		got := rt.bodies["AmazonSQS.ReceiveMessage"]
		if len(msgs) > 0 && !readReceived(got, &sqsReceived{}) {
			t.Fatalf("the node's ReceiveMessage answer is not the shape the shortcut reads:\n%s", got)
		}
	}
	errs, err := s.deleteBatch(ctx, "answers", handles)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range errs {
		if e != nil {
			t.Fatalf("handle %d: %v", i, e)
		}
	}
	if got := rt.bodies["AmazonSQS.DeleteMessageBatch"]; !readBatchResult(got, &sqsBatchResult{}) {
		t.Fatalf("the node's DeleteMessageBatch answer is not the shape the shortcut reads:\n%s", got)
	}
}
