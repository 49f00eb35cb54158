package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Handler processes one delivered message. Returning nil acknowledges it;
// returning an error hands it back (see ConsumeLoopOptions.KeepLeaseOnError).
// ctx is cancelled when the loop stops or when the message's lease is lost
// (then context.Cause(ctx) is ErrLeaseLost): a handler that sees it should
// stop, since another consumer may have the message by now.
type Handler func(ctx context.Context, m Message) error

// ErrLeaseLost is the cause of a handler's context being cancelled when the
// server answered 410 to an extend: the lease lapsed or was superseded, so
// the message may already be with another consumer, and the loop will not
// acknowledge it. OnError receives it, wrapped, for every lease lost.
var ErrLeaseLost = errors.New("the lease lapsed (HTTP 410); the message may be delivered again, to another consumer")

// ConsumeLoopOptions shape a ConsumeLoop. The zero value is a sensible
// loop: one message at a time, 10 s long-polls, leases extended every
// third of the topic's visibility timeout, failed messages nacked.
type ConsumeLoopOptions struct {
	// Wait is each consume's long-poll (default 10 s; the server caps it).
	Wait time.Duration
	// Max is how many messages one consume may lease (default 1). The
	// handler still sees them one at a time; those waiting their turn have
	// their leases extended meanwhile. For parallel handling run several
	// loops: each is independent.
	Max int
	// Partition consumes from that partition only; nil means any.
	Partition *int
	// VisibilityTimeout is the topic's lease length. Zero asks the server
	// once at start (GET /v1/topics/{topic}); a value changed later by an
	// alter is not noticed until the loop restarts.
	VisibilityTimeout time.Duration
	// ExtendEvery is how often a lease held for longer is extended
	// (default VisibilityTimeout / 3, so each lease gets two chances
	// before it would lapse). Setting it makes VisibilityTimeout unused.
	ExtendEvery time.Duration
	// KeepLeaseOnError, when true, leaves a message whose handler failed
	// leased until its visibility timeout lapses instead of nacking it:
	// the message comes back only after that pause, which keeps a message
	// that always fails from spinning (SQS's default). By default it is
	// nacked and available again at once (RabbitMQ's requeue).
	KeepLeaseOnError bool
	// OnError receives every error the loop tolerates and carries on
	// after: failed consumes it will retry, failed acks, extends and
	// nacks, leases lost. Nil ignores them. It must not block for long.
	OnError func(error)
	// Backoff is the first pause after a failed call (default 100 ms); it
	// doubles to at most 5 s and resets after a success. A 503's
	// Retry-After, when longer, wins.
	Backoff time.Duration
}

// Defaults of ConsumeLoopOptions.
const (
	defaultLoopWait    = 10 * time.Second
	defaultVisibility  = 30 * time.Second // the server's default, if a topic reports none
	defaultBackoff     = 100 * time.Millisecond
	maxBackoff         = 5 * time.Second
	maxRetryAfterPause = time.Minute
	// releaseTimeout bounds the acks and nacks sent after ctx is done:
	// handing messages back must not hold a stopping program for long.
	releaseTimeout = 5 * time.Second
)

// ConsumeLoop consumes topic until ctx is done, calling h for each
// message: a nil return acknowledges the message, an error nacks it (or,
// with KeepLeaseOnError, leaves its lease to lapse). While h runs longer
// than a fraction of the visibility timeout, the loop extends the lease in
// the background, so a slow handler does not lose its message; if an
// extend finds the lease lost, h's ctx is cancelled with cause
// ErrLeaseLost and the message is not acknowledged.
//
// Failed consumes that are worth retrying (IsTransient: 429, 5xx, no
// answer) are retried after a short backoff, and reported to OnError. Any
// other consume failure (the topic does not exist, 401, 403, a bad
// option) ends the loop and is returned.
//
// When ctx is done the loop stops: h's ctx is cancelled, a message whose
// handler then returns nil is still acknowledged, and every message still
// held — the one whose handler failed or was cut short, and those leased
// but not yet handled — is nacked, so another consumer gets it at once
// rather than after the visibility timeout. These last calls run on a
// context of their own, bounded to 5 s. ConsumeLoop then returns
// ctx.Err().
//
// Delivery is at least once: a message whose ack did not reach the server
// comes back. Make handlers idempotent, or dead-letter by
// Message.DeliveryCount.
func (c *Client) ConsumeLoop(ctx context.Context, topic string, opts ConsumeLoopOptions, h Handler) error {
	if topic == "" {
		return errEmptyName
	}
	if h == nil {
		return errors.New("ConsumeLoop needs a handler")
	}
	l := &loop{c: c, topic: topic, o: opts, h: h}
	l.bo.first = opts.Backoff
	if l.o.Wait <= 0 {
		l.o.Wait = defaultLoopWait
	}
	if err := l.timing(ctx); err != nil {
		return err
	}
	return l.run(ctx)
}

// loop is one ConsumeLoop's state; only its goroutine touches bo.
type loop struct {
	c     *Client
	topic string
	o     ConsumeLoopOptions
	h     Handler
	every time.Duration // how often held leases are extended
	bo    backoff
}

// timing settles how often leases are extended, asking the server for the
// topic's visibility timeout when the options do not give it.
func (l *loop) timing(ctx context.Context) error {
	if l.every = l.o.ExtendEvery; l.every > 0 {
		return nil
	}
	vt := l.o.VisibilityTimeout
	for vt <= 0 {
		t, err := l.c.GetTopic(ctx, l.topic)
		if err == nil {
			vt = time.Duration(t.VisibilityTimeoutMs) * time.Millisecond
			if vt <= 0 {
				vt = defaultVisibility
			}
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !IsTransient(err) {
			return fmt.Errorf("reading the visibility timeout of topic %q: %w", l.topic, err)
		}
		l.report(fmt.Errorf("reading the visibility timeout of topic %q: %w", l.topic, err))
		if !l.pause(ctx, err) {
			return ctx.Err()
		}
	}
	l.bo.reset()
	l.every = max(vt/3, time.Millisecond)
	return nil
}

func (l *loop) run(ctx context.Context) error {
	opts := ConsumeOptions{Wait: l.o.Wait, Partition: l.o.Partition}
	if l.o.Max > 1 {
		opts.Max = l.o.Max
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		msgs, err := l.c.Consume(ctx, l.topic, opts)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			err = fmt.Errorf("consuming topic %q: %w", l.topic, err)
			if !IsTransient(err) {
				return err
			}
			l.report(err)
			if !l.pause(ctx, err) {
				return ctx.Err()
			}
			continue
		}
		l.bo.reset()
		if len(msgs) > 0 {
			l.handle(ctx, msgs)
		}
	}
}

// handle runs the handler over one consume's messages in order, keeping
// their leases alive meanwhile, and hands back whatever is still held at
// the end (ctx done).
func (l *loop) handle(ctx context.Context, msgs []Message) {
	hs := newHeldSet(msgs)
	stop := l.extendWhileHeld(ctx, hs)
	defer stop()
	for _, m := range msgs {
		if ctx.Err() != nil {
			break
		}
		handle := m.ReceiptHandle
		hctx, cancel := context.WithCancelCause(ctx)
		if !hs.start(handle, cancel) {
			cancel(nil) // lost while waiting its turn
			continue
		}
		err := l.h(hctx, m)
		lost := errors.Is(context.Cause(hctx), ErrLeaseLost)
		cancel(nil)
		switch {
		case lost:
			hs.drop(handle) // already reported by the extender
		case err == nil:
			l.settle(ctx, hs, handle, "acknowledging", l.c.Ack)
		case l.o.KeepLeaseOnError:
			hs.drop(handle) // stop extending: the lease lapses by itself
		default:
			l.settle(ctx, hs, handle, "nacking", l.c.Nack)
		}
	}
	for _, handle := range hs.handles() {
		l.settle(ctx, hs, handle, "handing back", l.c.Nack)
	}
}

// settle acks or nacks handle, retrying a transient failure while ctx
// lives (the extender keeps the lease meanwhile); once ctx is done it
// makes one last attempt on a context of its own.
func (l *loop) settle(ctx context.Context, hs *heldSet, handle, what string, op func(context.Context, string, string) error) {
	h := hs.settling(handle)
	if h == nil {
		return
	}
	defer hs.drop(handle)
	for {
		callCtx, cancel := ctx, context.CancelFunc(func() {})
		stopping := ctx.Err() != nil
		if stopping {
			callCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		}
		// No extend of this lease runs while the ack or nack is out: one
		// landing after it would only earn a 410.
		h.call.Lock()
		err := op(callCtx, l.topic, handle)
		if err == nil {
			hs.drop(handle)
		}
		h.call.Unlock()
		cancel()
		switch {
		case err == nil:
			l.bo.reset()
			return
		case leaseGone(err):
			l.report(fmt.Errorf("%s %s on topic %q: %w", what, handle, l.topic, errors.Join(ErrLeaseLost, err)))
			return
		}
		if !stopping && ctx.Err() != nil {
			continue // cut short by the stop: one last attempt on its own context
		}
		l.report(fmt.Errorf("%s %s on topic %q: %w", what, handle, l.topic, err))
		if stopping || !IsTransient(err) {
			return
		}
		if !l.pause(ctx, err) {
			continue // ctx ended during the pause: one last attempt
		}
	}
}

// extendWhileHeld extends every held lease every l.every until stop is
// called.
func (l *loop) extendWhileHeld(ctx context.Context, hs *heldSet) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(l.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, handle := range hs.handles() {
				err := hs.extend(handle, func() error { return l.c.Extend(ctx, l.topic, handle) })
				switch {
				case err == nil, ctx.Err() != nil:
				case leaseGone(err):
					if hs.lose(handle) {
						l.report(fmt.Errorf("extending %s on topic %q: %w", handle, l.topic, errors.Join(ErrLeaseLost, err)))
					}
				default:
					l.report(fmt.Errorf("extending %s on topic %q: %w", handle, l.topic, err))
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// leaseGone reports whether err says the lease is over for good: 410, or
// the topic is gone.
func leaseGone(err error) bool {
	s := StatusOf(err)
	return s == http.StatusGone || s == http.StatusNotFound
}

func (l *loop) report(err error) {
	if l.o.OnError != nil {
		l.o.OnError(err)
	}
}

// pause waits out the backoff after err; false means ctx ended first.
func (l *loop) pause(ctx context.Context, err error) bool {
	t := time.NewTimer(l.bo.next(err))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff doubles from first to maxBackoff; a server's Retry-After, when
// longer, is honoured (up to a minute).
type backoff struct {
	first, cur time.Duration
}

func (b *backoff) next(err error) time.Duration {
	if b.first <= 0 {
		b.first = defaultBackoff
	}
	d := max(b.cur, b.first)
	b.cur = min(2*d, max(maxBackoff, b.first))
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.RetryAfter > d {
		d = min(apiErr.RetryAfter, maxRetryAfterPause)
	}
	return d
}

func (b *backoff) reset() { b.cur = 0 }

// heldSet is the leases one consume handed out that are not settled yet:
// the extender keeps them alive, and the loop hands them back at the end.
type heldSet struct {
	mu   sync.Mutex
	held map[string]*held
	// order keeps handles() in delivery order, so messages handed back
	// at a stop are released in the order they came.
	order []string
}

type held struct {
	// call is held while an ack, nack or extend of this lease is out, so
	// they never cross on the wire.
	call     sync.Mutex
	cancel   context.CancelCauseFunc // the running handler's, nil before it starts
	settling bool                    // an ack or nack is under way: a 410 is its to report
}

func newHeldSet(msgs []Message) *heldSet {
	hs := &heldSet{held: map[string]*held{}}
	for _, m := range msgs {
		if m.ReceiptHandle != "" { // a replayed record has no lease
			hs.held[m.ReceiptHandle] = &held{}
			hs.order = append(hs.order, m.ReceiptHandle)
		}
	}
	return hs
}

// handles is every handle still held, in delivery order.
func (hs *heldSet) handles() []string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	out := make([]string, 0, len(hs.held))
	for _, h := range hs.order {
		if hs.held[h] != nil {
			out = append(out, h)
		}
	}
	return out
}

// start records the handler about to run for handle; false if the lease
// is already lost.
func (hs *heldSet) start(handle string, cancel context.CancelCauseFunc) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.held[handle]
	if h == nil {
		return false
	}
	h.cancel = cancel
	return true
}

// settling marks handle as being acked or nacked and returns it; nil if
// it is no longer held.
func (hs *heldSet) settling(handle string) *held {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.held[handle]
	if h != nil {
		h.settling, h.cancel = true, nil
	}
	return h
}

// extend runs call (an extend of handle) unless the lease was settled
// meanwhile; nil then.
func (hs *heldSet) extend(handle string, call func() error) error {
	hs.mu.Lock()
	h := hs.held[handle]
	hs.mu.Unlock()
	if h == nil {
		return nil
	}
	h.call.Lock()
	defer h.call.Unlock()
	hs.mu.Lock()
	still := hs.held[handle] == h
	hs.mu.Unlock()
	if !still {
		return nil
	}
	return call()
}

// lose forgets handle after an extend found its lease gone, cancelling its
// handler; false when there was nothing to lose (settled or settling).
func (hs *heldSet) lose(handle string) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.held[handle]
	if h == nil || h.settling {
		return false
	}
	delete(hs.held, handle)
	if h.cancel != nil {
		h.cancel(ErrLeaseLost)
	}
	return true
}

func (hs *heldSet) drop(handle string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.held, handle)
}
