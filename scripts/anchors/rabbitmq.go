package main

import (
	"context"
	"errors"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// rabbitMQ is the RabbitMQ anchor: quorum queues bench-N (Raft-replicated,
// every message fsynced by a majority before its confirm), published to
// through the default exchange, persistent, in confirm mode. Queue N is
// declared through server N (mod the servers), so that its leader is
// there (RabbitMQ places a new queue's leader on the node the declaring
// client is connected to) and the leaders are spread as a Narad topic's
// are.
type rabbitMQ struct{}

func (rabbitMQ) create(ctx context.Context, urls []string, n, replicas int) error {
	for i := range n {
		name := fmt.Sprintf("bench-%d", i)
		err := retry(ctx, func() error {
			conn, err := amqp.Dial(urls[i%len(urls)])
			if err != nil {
				return err
			}
			defer conn.Close()
			ch, err := conn.Channel()
			if err != nil {
				return err
			}
			_, err = ch.QueueDeclare(name, true, false, false, false, amqp.Table{
				"x-queue-type": "quorum", "x-quorum-initial-group-size": replicas})
			return err
		})
		if err != nil {
			return fmt.Errorf("declare %s: %w", name, err)
		}
	}
	return nil
}

func (rabbitMQ) open(_ context.Context, url string) (publisher, error) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return nil, err
	}
	ch, err := conn.Channel()
	if err == nil {
		err = ch.Confirm(false)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return amqpPublisher{conn, ch}, nil
}

type amqpPublisher struct {
	conn *amqp.Connection
	ch   *amqp.Channel
}

func (p amqpPublisher) send(ctx context.Context, s int, payload []byte) error {
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, "", fmt.Sprintf("bench-%d", s), true, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: payload})
	if err != nil {
		return err
	}
	ok, err := dc.WaitContext(ctx)
	if err == nil && !ok {
		err = errors.New("the broker refused the message (nack)")
	}
	return err
}

func (p amqpPublisher) close() { p.conn.Close() }
