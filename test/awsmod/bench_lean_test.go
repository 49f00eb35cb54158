package awsmod

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// leanSQS speaks SQS's JSON protocol with nothing but net/http, the
// SDK's signer and encoding/json: a client as light as Narad's own, so
// that the benchmarks' "lean" rows compare the node's two protocols
// rather than the two clients' appetites for the CPU they share.
type leanSQS struct {
	url    string
	hc     *http.Client
	signer *v4.Signer
	creds  aws.Credentials
}

func newLeanSQS(n *node) *leanSQS {
	return &leanSQS{url: n.url() + "/", hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}},
		signer: v4.NewSigner(), creds: aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}}
}

// call sends one action and decodes its answer into out (nil: none).
func (l *leanSQS) call(ctx context.Context, action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	sum := sha256.Sum256(body)
	if err := l.signer.SignHTTP(ctx, l.creds, req, hex.EncodeToString(sum[:]), "sqs", "us-east-1", time.Now()); err != nil {
		return err
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", action, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

type leanEntry struct {
	ID            string `json:"Id"`
	MessageBody   string `json:",omitempty"`
	ReceiptHandle string `json:",omitempty"`
}

type leanBatchAnswer struct {
	Failed []json.RawMessage
}

func (l *leanSQS) send(ctx context.Context, q string, per int) error {
	if per == 1 {
		return l.call(ctx, "SendMessage", map[string]string{"QueueUrl": q, "MessageBody": body}, nil)
	}
	es := make([]leanEntry, per)
	for i := range es {
		es[i] = leanEntry{ID: strconv.Itoa(i), MessageBody: body}
	}
	var a leanBatchAnswer
	if err := l.call(ctx, "SendMessageBatch", map[string]any{"QueueUrl": q, "Entries": es}, &a); err != nil {
		return err
	}
	if len(a.Failed) > 0 {
		return fmt.Errorf("SendMessageBatch: %d failed", len(a.Failed))
	}
	return nil
}

func (l *leanSQS) receiveDelete(ctx context.Context, q string, per int) error {
	var got struct {
		Messages []struct{ ReceiptHandle string }
	}
	if err := l.call(ctx, "ReceiveMessage", map[string]any{"QueueUrl": q, "MaxNumberOfMessages": per, "WaitTimeSeconds": 1}, &got); err != nil {
		return err
	}
	if per == 1 {
		for _, m := range got.Messages {
			if err := l.call(ctx, "DeleteMessage", map[string]string{"QueueUrl": q, "ReceiptHandle": m.ReceiptHandle}, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if len(got.Messages) == 0 {
		return nil
	}
	es := make([]leanEntry, len(got.Messages))
	for i, m := range got.Messages {
		es[i] = leanEntry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle}
	}
	var a leanBatchAnswer
	if err := l.call(ctx, "DeleteMessageBatch", map[string]any{"QueueUrl": q, "Entries": es}, &a); err != nil {
		return err
	}
	if len(a.Failed) > 0 {
		return fmt.Errorf("DeleteMessageBatch: %d failed", len(a.Failed))
	}
	return nil
}

// BenchmarkLean is BenchmarkSend's and BenchmarkReceiveDelete's SQS rows
// with the lean client.
func BenchmarkLean(b *testing.B) {
	n := benchNode(b)
	for _, per := range []int{1, 10} {
		b.Run(fmt.Sprintf("send/%d", per), func(b *testing.B) {
			_, q := sqsBench(b, n, fmt.Sprintf("bl-send-%d-%d-%d", per, b.N, runs.Add(1)))
			l := newLeanSQS(n)
			run(b, n, per, func(ctx context.Context, _ int) error { return l.send(ctx, *q, per) })
		})
		b.Run(fmt.Sprintf("recv/%d", per), func(b *testing.B) {
			_, q := sqsBench(b, n, fmt.Sprintf("bl-recv-%d-%d-%d", per, b.N, runs.Add(1)))
			l := newLeanSQS(n)
			fill(b, func(ctx context.Context, k int) error { return l.send(ctx, *q, k) })
			run(b, n, per, func(ctx context.Context, _ int) error { return l.receiveDelete(ctx, *q, per) })
		})
	}
}
