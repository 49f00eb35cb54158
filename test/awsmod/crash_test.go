package awsmod

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// TestSIGKILLLosesNothingSent kills the node (SIGKILL) while SQS producers
// and consumers run, restarts it on the same data directory, and drains
// the queue: every message whose SendMessage was answered 200 with a
// MessageId is received (at least once), whatever the kill interrupted.
func TestSIGKILLLosesNothingSent(t *testing.T) {
	n := startNode(t)
	c := sqsClient(n, "test", "test")
	ctx := ctxT(t)
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("crash"),
		Attributes: map[string]string{"VisibilityTimeout": "2"}})
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		sent     = map[string]bool{} // answered 200
		received = map[string]bool{}
	)
	record := func(m map[string]bool, k string) {
		mu.Lock()
		m[k] = true
		mu.Unlock()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("p%d-%d", p, i)
				sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err := c.SendMessage(sctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(body)})
				cancel()
				if err == nil {
					record(sent, body)
				}
			}
		}()
	}
	consume := func(wait int32) int {
		rctx, cancel := context.WithTimeout(ctx, time.Duration(wait+3)*time.Second)
		defer cancel()
		out, err := c.ReceiveMessage(rctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: wait})
		if err != nil {
			return 0
		}
		for _, m := range out.Messages {
			record(received, *m.Body)
			c.DeleteMessage(rctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle})
		}
		return len(out.Messages)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			consume(1)
		}
	}()

	// Let some traffic through, kill, restart, let more through.
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sent) >= 200 })
	n.kill()
	n.start()
	mu.Lock()
	before := len(sent)
	mu.Unlock()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sent) >= before+100 })
	close(stop)
	wg.Wait()

	// Drain: every sent message comes back (the leases the kill left
	// behind expire after the queue's 2 s visibility timeout).
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		missing := 0
		for b := range sent {
			if !received[b] {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 {
			t.Logf("sent %d, received %d distinct", len(sent), len(received))
			return
		}
		consume(2)
	}
	mu.Lock()
	defer mu.Unlock()
	var lost []string
	for b := range sent {
		if !received[b] {
			lost = append(lost, b)
		}
	}
	t.Fatalf("%d of %d messages answered 200 were never received, e.g. %v", len(lost), len(sent), lost[:min(5, len(lost))])
}

// waitFor polls cond until it holds, for at most 30 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
