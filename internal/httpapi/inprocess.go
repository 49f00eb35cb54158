package httpapi

import (
	"context"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/broker"
)

// In-process requests: another protocol edge of this node (the SQS and SNS
// edge, package awsapi) carries out its actions as /v1 requests served
// by this Server, so that authorization, rate limits, routing to the
// leader and to partition owners, metrics and refusals are the API's own
// and no second path to the data plane exists. Such an edge authenticates
// its callers its own way (an AWS signature) and hands the Server the
// principal in the request's context; a context value cannot come from
// the network, so nothing a client sends can claim one.

type edgeKey struct{}

// edgeCall is what an in-process request carries.
type edgeCall struct {
	principal auth.Principal
	authed    bool
	records   []broker.ProduceRecord
	messages  *[]broker.Message
	accepted  *[]broker.Accepted
	// acks: the handles of an in-process batch ack and where its
	// results go (WithAcks).
	ackHandles []string
	ackResults *[]AckResult
}

func edgeOf(ctx context.Context) edgeCall {
	c, _ := ctx.Value(edgeKey{}).(edgeCall)
	return c
}

// AsUser returns ctx for an in-process request made on behalf of p, whom
// the calling edge authenticated: the request skips Basic auth and is
// authorised as p, with p's grants and limits.
func AsUser(ctx context.Context, p auth.Principal) context.Context {
	c := edgeOf(ctx)
	c.principal, c.authed = p, true
	return context.WithValue(ctx, edgeKey{}, c)
}

// WithRecords returns ctx for an in-process batch produce
// (POST /v1/topics/{topic}/produce/batch) whose records the edge decoded
// itself: the request's body is not read, and the records may carry what
// no /v1 body can (broker.ProduceRecord.AWS). Everything else about the
// produce — grants, limits, the broker's checks, the answer — is as for
// a body.
func WithRecords(ctx context.Context, recs []broker.ProduceRecord) context.Context {
	c := edgeOf(ctx)
	c.records = recs
	return context.WithValue(ctx, edgeKey{}, c)
}

// WithAccepted returns ctx for an in-process batch produce whose answer
// the edge takes as values: what the produce accepted, record by record,
// is stored in *sink and the answer is an empty 202, sparing its JSON
// both ways. A refusal answers as usual, and *sink stays nil.
func WithAccepted(ctx context.Context, sink *[]broker.Accepted) context.Context {
	c := edgeOf(ctx)
	c.accepted = sink
	return context.WithValue(ctx, edgeKey{}, c)
}

// WithMessages returns ctx for an in-process consume
// (GET /v1/topics/{topic}/consume) that takes the messages this node
// serves as values: they are stored in *sink and the answer is an empty
// 200, sparing their JSON both ways. A consume answered by another node
// (forwarded in a cluster) still answers JSON, and *sink stays nil.
func WithMessages(ctx context.Context, sink *[]broker.Message) context.Context {
	c := edgeOf(ctx)
	c.messages = sink
	return context.WithValue(ctx, edgeKey{}, c)
}

// WithAcks returns ctx for an in-process batch ack
// (POST /v1/topics/{topic}/ack without a receipt_handle parameter) of
// handles, whose results the edge takes as values: the request's body is
// not read, the results are stored in *sink in the handles' order, and
// the answer is an empty 200. Grants, forwarding to the partitions'
// owners and each result are as for a body.
func WithAcks(ctx context.Context, handles []string, sink *[]AckResult) context.Context {
	c := edgeOf(ctx)
	c.ackHandles, c.ackResults = handles, sink
	return context.WithValue(ctx, edgeKey{}, c)
}
