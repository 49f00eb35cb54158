package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func (a *app) userCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Manage users, their grants and passwords",
		Long: `Manage the broker's users.

A grant is written ACTION:PATTERN[,PATTERN...]. ACTION is produce, consume,
create or admin; a PATTERN is a topic name or a prefix ending in "*". So
"produce:orders-*" allows producing to every topic whose name starts with
"orders-", and "consume:a,b.*" consuming from "a" and from every "b.*".

Passwords are read from standard input, one line, and never from a flag:
pipe one in, or type it at the prompt (not echoed).

Rate limits are --limit NAME=VALUE (see "narad user edit --help"): per
second on each node, 0 or unlimited for none, default for the node's
configured default.`,
	}
	cmd.AddCommand(
		a.userAddCmd(),
		a.userEditCmd(),
		a.userGrantCmd(),
		a.userListCmd(),
		a.userShowCmd(),
		a.userRemoveCmd(),
		a.userPasswdCmd(),
		a.userKeysCmd(),
	)
	return cmd
}

const grantFlagHelp = "ACTION:PATTERN[,PATTERN...] to allow; repeatable (ACTION: produce, consume, create, admin)"

// registerGrants adds the repeatable --grant flag. It is a string array,
// not a slice: a slice would split "consume:a,b" at the comma.
func registerGrants(fs *pflag.FlagSet, dst *[]string) {
	fs.StringArrayVar(dst, "grant", nil, grantFlagHelp)
}

func (a *app) userAddCmd() *cobra.Command {
	var grants, limits []string
	var quiet bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "add NAME [--grant ACTION:PATTERN[,PATTERN...]]... [--limit NAME=VALUE]...",
		Short: "Create a user; the password is read from standard input",
		Long: `Create the user NAME with the grants given.

The password is read from standard input, one line: pipe it in
(--password-stdin: no prompt), or type it at the prompt (not echoed). It is
never taken from a flag: -p/--password is the password you sign in with.

  narad user add billing --grant produce:invoices.* --grant consume:orders,refunds
  narad user add batch --grant produce:imports --limit produce_records_per_s=1000 --limit produce_bytes_per_s=4MiB

Limits not given are the node's configured defaults (limits.*).
produce_bytes_per_s counts each record's key, payload, header names and
values, and msg_id.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			gs, err := parseGrants(grants)
			if err != nil {
				return err
			}
			set, err := parseLimits(limits)
			if err != nil {
				return err
			}
			a.warnArgvPassword(passwordNote("the password you sign in with", args[0]+"'s"))
			c, err := a.client()
			if err != nil {
				return err
			}
			pw, err := a.readSecret("Password for new user "+args[0], quiet)
			if err != nil {
				return err
			}
			u, err := c.CreateUser(cmd.Context(), client.CreateUserRequest{Username: args[0], Password: pw, Grants: gs, Limits: ownLimits(set)})
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, u)
			}
			if len(set) > 0 {
				_, err = fmt.Fprintf(a.stdout, "created user %s: %s; limits: %s\n", u.Username, grantsOrNone(u.Grants), formatLimits(u))
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "created user %s: %s\n", u.Username, grantsOrNone(u.Grants))
			return err
		},
	}
	registerGrants(cmd.Flags(), &grants)
	registerLimits(cmd.Flags(), &limits)
	cmd.Flags().BoolVar(&quiet, "password-stdin", false, passwordFromStdinHelp)
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) userGrantCmd() *cobra.Command {
	var grants []string
	var none bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "grant NAME (--grant ACTION:PATTERN[,PATTERN...]... | --none)",
		Short: "Replace a user's grants",
		Long: `Replace every grant of NAME with the ones given. The old grants are not
kept: list them all. --none removes every grant; without it, a call with no
--grant is refused, so grants are never dropped by a forgotten flag.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeUsers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			switch {
			case none && len(grants) > 0:
				return errors.New("--none and --grant contradict each other")
			case !none && len(grants) == 0:
				return errors.New("no grants given: use --grant ACTION:PATTERN, or --none to remove every grant")
			}
			gs, err := parseGrants(grants)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			u, err := c.SetGrants(cmd.Context(), args[0], gs)
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, u)
			}
			_, err = fmt.Fprintf(a.stdout, "grants of %s: %s\n", u.Username, grantsOrNone(u.Grants))
			return err
		},
	}
	registerGrants(cmd.Flags(), &grants)
	cmd.Flags().BoolVar(&none, "none", false, "remove every grant")
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) userListCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List users, their grants and the rate limits that limit them",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			users, err := c.ListUsers(cmd.Context())
			if err != nil {
				return err
			}
			slices.SortFunc(users, func(x, y client.User) int { return strings.Compare(x.Username, y.Username) })
			if format == formatJSON {
				return printJSON(a.stdout, struct {
					Users []client.User `json:"users"`
				}{nonNil(users)})
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "USER\tGRANTS\tLIMITS")
			for _, u := range users {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Username, orDash(formatGrants(u.Grants)), shortLimits(u))
			}
			return tw.Flush()
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) userRemoveCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:               "rm NAME",
		Aliases:           []string{"delete"},
		Short:             "Delete a user",
		Long:              `Delete the user NAME. -o json prints {"username": NAME, "deleted": true}.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeUsers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			if err := c.DeleteUser(cmd.Context(), args[0]); err != nil {
				return err
			}
			return printDone(a.stdout, format, struct {
				Username string `json:"username"`
				Deleted  bool   `json:"deleted"`
			}{args[0], true}, "deleted user "+args[0])
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) userPasswdCmd() *cobra.Command {
	var quiet bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "passwd [NAME]",
		Short: "Change a password (yours by default); the new one is read from standard input",
		Long: `Change the password of NAME, by default the user you are signed in as
(--user, NARAD_USER or the saved context).

Changing your own password proves it is you: the password you sign in with
(--password, NARAD_PASS or the saved context) is sent as the current one.
For anyone else it is an admin reset, and no current password is sent.

The new password is read from standard input, one line: pipe it in, or type
it at the prompt (not echoed). It is never taken from a flag.

-o json prints {"username": NAME, "password_changed": true}.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeUsers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			t, err := a.resolveTarget()
			if err != nil {
				return err
			}
			name := t.user
			if len(args) == 1 {
				name = args[0]
			}
			if name == "" {
				return errors.New("whose password? Give NAME, or sign in with --user, NARAD_USER or a context")
			}
			current := ""
			note := passwordNote("the password you sign in with", name+"'s new one")
			if name == t.user {
				current = t.password
				note = passwordNote("your current password", "the new one")
			}
			a.warnArgvPassword(note)
			pw, err := a.readSecret("New password for "+name, quiet)
			if err != nil {
				return err
			}
			c, err := a.clientFor(t)
			if err != nil {
				return err
			}
			if err := c.SetPassword(cmd.Context(), name, pw, current); err != nil {
				return err
			}
			return printDone(a.stdout, format, struct {
				Username        string `json:"username"`
				PasswordChanged bool   `json:"password_changed"`
			}{name, true}, "changed the password of "+name)
		},
	}
	cmd.Flags().BoolVar(&quiet, "password-stdin", false, passwordFromStdinHelp)
	out = addOutputFlags(cmd)
	return cmd
}

// grantActions are the actions the server knows (docs/security.md); checking
// here turns a typo into an error before anything is sent.
var grantActions = []string{client.ActionProduce, client.ActionConsume, client.ActionCreate, client.ActionAdmin}

// parseGrants reads --grant values: "ACTION:PATTERN[,PATTERN...]", the
// action before the first colon. It never returns nil, so "no grants"
// reaches the server as an explicit empty list.
func parseGrants(specs []string) ([]client.Grant, error) {
	gs := []client.Grant{}
	for _, spec := range specs {
		bad := func(why string) error {
			return fmt.Errorf("--grant %q: %s (want ACTION:PATTERN[,PATTERN...], e.g. produce:orders-*)", spec, why)
		}
		action, list, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, bad("no colon after the action")
		}
		if !slices.Contains(grantActions, action) {
			return nil, bad(fmt.Sprintf("unknown action %q; the actions are %s", action, strings.Join(grantActions, ", ")))
		}
		var patterns []string
		for _, p := range strings.Split(list, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				return nil, bad("empty pattern")
			}
			if i := strings.IndexByte(p, '*'); i >= 0 && i != len(p)-1 {
				return nil, bad(fmt.Sprintf("pattern %q: \"*\" may only end a pattern", p))
			}
			patterns = append(patterns, p)
		}
		gs = append(gs, client.Grant{Action: action, Patterns: patterns})
	}
	return gs, nil
}

// formatGrants writes grants the way --grant takes them, joined by "; ":
// "produce:orders-*; consume:a,b.*".
func formatGrants(gs []client.Grant) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.Action + ":" + strings.Join(g.Patterns, ",")
	}
	return strings.Join(parts, "; ")
}

func grantsOrNone(gs []client.Grant) string {
	if len(gs) == 0 {
		return "no grants"
	}
	return formatGrants(gs)
}
