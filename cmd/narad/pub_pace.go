package main

import (
	"context"

	"golang.org/x/time/rate"
)

// limiter paces pub --rate: Wait returns when the next message may go, or
// with ctx's error. *rate.Limiter is one.
type limiter interface {
	Wait(ctx context.Context) error
}

// newLimiter is how pub gets its pacer; a variable so a test can see each
// wait without waiting. A burst of 1: --rate is a cap, so a slow request
// never earns a catch-up burst, and the first message goes at once.
var newLimiter = func(perSecond float64) limiter {
	if perSecond <= 0 {
		return unlimited{}
	}
	return rate.NewLimiter(rate.Limit(perSecond), 1)
}

// unlimited is no --rate: only a cancelled ctx stops the next message.
type unlimited struct{}

func (unlimited) Wait(ctx context.Context) error { return ctx.Err() }
