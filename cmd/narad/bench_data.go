package main

import (
	"context"
	"time"

	"github.com/narad-io/narad/client"
)

// benchData is what the bench asks of the node while it measures:
// produce, consume and acknowledge. --api picks the protocol: the native
// /v1 API (nativeData) or Amazon SQS's JSON protocol (sqsData), so that
// the same phases compare the node's two protocols. Making and deleting
// the scratch topic stays on /v1 either way: a topic is a queue.
type benchData interface {
	// open readies topic before anything is measured.
	open(ctx context.Context, topic string) error
	// produce sends one record.
	produce(ctx context.Context, topic string, payload []byte, o client.ProduceOptions) error
	// produceBatch sends records in one request and says how many the
	// node accepted.
	produceBatch(ctx context.Context, topic string, records []client.BatchRecord) (int, error)
	// consume takes up to max records, waiting up to a second for one.
	consume(ctx context.Context, topic string, max int) ([]client.Message, error)
	// ack acknowledges handles as ackHandles does: fail is called once
	// for each handle that could not be acknowledged; retried counts the
	// handles sent again after a transient answer.
	ack(ctx context.Context, topic string, handles []string, tries int, fail func(handle string, err error)) (failed, retried int)
}

// nativeData is the /v1 API through the Go client, as the bench always
// measured it.
type nativeData struct {
	c      *client.Client
	format client.BatchFormat // --batch-format
}

func (nativeData) open(context.Context, string) error { return nil }

func (n nativeData) produce(ctx context.Context, topic string, payload []byte, o client.ProduceOptions) error {
	return n.c.Produce(ctx, topic, payload, o)
}

func (n nativeData) produceBatch(ctx context.Context, topic string, records []client.BatchRecord) (int, error) {
	return n.c.ProduceBatchAs(ctx, topic, records, n.format)
}

func (n nativeData) consume(ctx context.Context, topic string, max int) ([]client.Message, error) {
	return n.c.Consume(ctx, topic, client.ConsumeOptions{Wait: time.Second, Max: max})
}

func (n nativeData) ack(ctx context.Context, topic string, handles []string, tries int, fail func(string, error)) (int, int) {
	return ackHandles(ctx, n.c, topic, handles, tries, fail)
}

// benchData builds the data calls of --api.
func (a *app) benchData(f benchFlags, c *client.Client) (benchData, error) {
	if f.api == "sqs" {
		return a.sqsData(f)
	}
	format, _ := client.ParseBatchFormat(f.format) // checked by resolve
	return nativeData{c: c, format: format}, nil
}
