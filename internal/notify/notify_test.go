package notify

import (
	"testing"
	"time"
)

func TestFireWakesEveryWaiterOnce(t *testing.T) {
	b := New()
	chs := []<-chan struct{}{b.Wait(), b.Wait()}
	b.Fire()
	for i, ch := range chs {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d not woken", i)
		}
	}
	select {
	case <-b.Wait():
		t.Fatal("a channel taken after Fire is already closed")
	default:
	}
}
