// Package awsapi is the Amazon SQS and SNS protocol edge (docs/aws.md):
// an http.Handler in front of the node's /v1 API and console on the
// client listener, so that code written for SQS and SNS works against
// Narad by changing its endpoint URL and its keys.
//
// It claims a request by its shape — X-Amz-Target: AmazonSQS.<Action>
// (SQS's JSON protocol), or an Action parameter on "/" or a queue URL's
// path (the Query protocol, SQS's older one and SNS's only one) — and
// hands every other request on. A claimed request is authenticated by
// its AWS signature (Options.Verify: SigV4 against users' access keys,
// package auth), decoded into one JSON-shaped parameter tree whichever
// protocol carried it (params.go, query.go), carried out, and answered
// in the protocol's shape, refusals as AWS's error codes (errors.go,
// xml.go).
//
// Every action is carried out as in-process /v1 requests on the node's
// own API (httpapi.AsUser, httpapi.WithRecords; v1.go): a queue or an SNS
// topic is a topic, a send a produce, a receive a consume with leases, a
// delete an ack, a subscription a fan-out child link. So grants, rate
// limits, routing to the leader and to partition owners, and refusals
// are the API's own, and no second path to the data plane exists.
//
// Invariant: the edge keeps no message, lease, dedupe window or link of
// its own — everything a client can observe lives in the topics it
// translates to, through /v1 and this edge alike. What it keeps in memory is
// only what AWS's API needs and Narad has no field for: message move
// tasks, the one-purge-a-minute rule, and a queue's send settings for
// at most infoTTL. A refused request changes nothing: every check that
// can refuse runs before the /v1 request that would change state.
package awsapi
