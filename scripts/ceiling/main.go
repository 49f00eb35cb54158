// Command ceiling is the yardstick of the single-record produce figure: the
// least an HTTP server can do to answer a produce with 202 only after an
// fdatasync — net/http, one file, group commit (every request that arrives
// while a sync is running joins the next one) — and nothing else. It
// answers just what `narad bench` asks for a produce-only run (create the
// scratch topic, produce, delete it), so
//
//	go run ./scripts/ceiling -addr 127.0.0.1:17999 -dir /some/scratch &
//	narad -s http://127.0.0.1:17999 bench --producers 16 --messages 30000 --size 256
//
// measures this machine's limit for the figure with the same client, at
// the same moment as Narad: a disk's fdatasync time drifts from hour to
// hour on a shared machine, and a ratio to this ceiling does not.
// scripts/bench.sh runs it as the figure "ceiling16".
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// syncer is a group commit over one append-only file.
type syncer struct {
	f       *os.File
	mu      sync.Mutex
	buf     []byte
	waiters []chan error
	wake    chan struct{}
}

func (s *syncer) append(p []byte) error {
	done := make(chan error, 1)
	s.mu.Lock()
	s.buf = append(s.buf, p...)
	s.waiters = append(s.waiters, done)
	first := len(s.waiters) == 1
	s.mu.Unlock()
	if first {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return <-done
}

func (s *syncer) run() {
	var spare []byte
	for range s.wake {
		for {
			s.mu.Lock()
			buf, waiters := s.buf, s.waiters
			s.buf, s.waiters = spare[:0], nil
			s.mu.Unlock()
			if len(waiters) == 0 {
				break
			}
			_, err := s.f.Write(buf)
			if err == nil {
				err = s.f.Sync()
			}
			for _, w := range waiters {
				w <- err
			}
			spare = buf
		}
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:17999", "listen address")
	dir := flag.String("dir", "", "directory for the log file (required)")
	flag.Parse()
	if *dir == "" {
		log.Fatal("ceiling: -dir is required")
	}
	f, err := os.OpenFile(filepath.Join(*dir, "ceiling.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	s := &syncer{f: f, wake: make(chan struct{}, 1)}
	go s.run()
	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	http.HandleFunc("/v1/topics", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		req["partitions"] = 3
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(req)
	})
	http.HandleFunc("/v1/topics/", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/produce"):
			body, err := io.ReadAll(r.Body)
			if err == nil {
				err = s.append(body)
			}
			if err != nil {
				http.Error(w, `{"error":"`+err.Error()+`"}`, http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		default:
			http.NotFound(w, r)
		}
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
