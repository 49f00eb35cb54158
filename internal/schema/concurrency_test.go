package schema

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentValidate shares one Schema between goroutines, as the
// broker's schema cache does; run under -race it proves Validate does not
// write to the compiled schema, and each call still gets its own verdict.
func TestConcurrentValidate(t *testing.T) {
	s := mustCompile(t, orderSchema)
	const workers, rounds = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				valid := (w+i)%2 == 0
				body := fmt.Sprintf(`{"id":%d,"tags":["t%d"]}`, i, w)
				if !valid {
					body = fmt.Sprintf(`{"id":"%d"}`, i)
				}
				err := s.Validate([]byte(body))
				if valid && err != nil {
					errs <- fmt.Errorf("worker %d: valid body %s rejected: %v", w, body, err)
					return
				}
				if !valid && (err == nil || err.Error() != "at '/id': got string, want integer") {
					errs <- fmt.Errorf("worker %d: invalid body %s: got %v", w, body, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
