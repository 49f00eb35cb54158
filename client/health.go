package client

import (
	"context"
	"net/http"
)

// Healthz asks whether the process is alive: GET /healthz, any 2xx.
func (c *Client) Healthz(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/healthz"})
	return err
}

// Readyz asks whether the node serves traffic (joined, partitions loaded):
// GET /readyz, any 2xx; 503 while not ready comes back as *APIError.
func (c *Client) Readyz(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/readyz"})
	return err
}
