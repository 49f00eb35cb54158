package awsapi

import (
	"strconv"
	"sync"
	"time"
)

// What a send and a receive need of their queue — its size cap, its
// default long poll, content-based deduplication — is read from the
// topic record and kept for infoTTL, so that a send costs no describe.
// A change of those attributes therefore reaches sends within infoTTL.
const infoTTL = 2 * time.Second

type queueInfo struct {
	at           time.Time
	maxSize      int
	waitSeconds  int64
	contentDedup bool
}

type infoCache struct {
	mu sync.Mutex
	m  map[string]queueInfo
}

func (e *Edge) queueInfo(c *call, name string) (queueInfo, error) {
	now := e.now()
	e.info.mu.Lock()
	qi, ok := e.info.m[name]
	e.info.mu.Unlock()
	if ok && now.Sub(qi.at) < infoTTL {
		return qi, nil
	}
	t, err := e.topic(c, name, errQueueDoesNotExist)
	if err != nil {
		return queueInfo{}, err
	}
	qi = queueInfo{at: now, maxSize: defaultMaxSize}
	if v, err := strconv.Atoi(t.AWSAttributes["MaximumMessageSize"]); err == nil {
		qi.maxSize = v
	}
	if v, err := strconv.ParseInt(t.AWSAttributes["ReceiveMessageWaitTimeSeconds"], 10, 64); err == nil {
		qi.waitSeconds = v
	}
	qi.contentDedup = t.AWSAttributes["ContentBasedDeduplication"] == "true"
	e.info.mu.Lock()
	if e.info.m == nil || len(e.info.m) > 10_000 {
		e.info.m = map[string]queueInfo{}
	}
	e.info.m[name] = qi
	e.info.mu.Unlock()
	return qi, nil
}
