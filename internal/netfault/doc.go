// Package netfault is a seam for tests that run nodes over a bad network
// without touching the host's: peerauth's Dialer passes every dialled
// peer connection, before its handshake, through Wrap.
//
// In every build without the narad_netfault tag Wrap returns the
// connection it is given (wrap.go), so the production binary carries no
// fault code and pays nothing. In a build with the tag (the fault tests'
// binary only) Wrap reads rules from the JSON file named by
// NARAD_NETFAULT_FILE, re-read when it changes (polled every 100 ms), and
// applies the rule for the dialled address to the connection:
//
//   - delay: each write, and each chunk read on the dialling side, is
//     held for a one-way delay drawn from [delay_min_ms, delay_max_ms],
//     so one round trip on the connection sees two delays. Writes return
//     at once and a goroutine delivers them at their release times, as a
//     kernel's send buffer does: a delay never slows a connection's
//     throughput, only its latency.
//   - loss: TCP turns a lost segment into a retransmission, which the
//     application sees as extra latency, never as missing bytes. So a
//     write (or read chunk) is "lost" with probability loss and then held
//     for one retransmission timeout more: max(200 ms, twice the largest
//     one-way delay), the RTO Linux settles on for such a round trip.
//     The retransmission is lost again with the same probability, the
//     timeout doubling each time (TCP's backoff). Data behind a lost
//     write waits for it (TCP delivers in order: head-of-line blocking).
//   - cut: packets are dropped silently, as when a link or switch fails.
//     TCP then retransmits for many minutes before it gives up, so
//     nothing fails at once: data written is held, nothing is read, and
//     a new dial's handshake hangs until its deadline (the TCP connect
//     itself succeeds on loopback, but no byte of the handshake passes).
//     The program notices only through its own timeouts and deadlines,
//     as it would on a real network. When the cut ends, the held data
//     flows in order, as retransmissions would deliver it.
//
// A fault between nodes A and B is configured on both: A's rules name B's
// addresses and B's name A's, since each node wraps only what it dials.
//
// Invariant: bytes written on a wrapped connection arrive complete and in
// order, or the connection fails; a rule changes only when, never whether
// or in which order, they arrive.
package netfault
