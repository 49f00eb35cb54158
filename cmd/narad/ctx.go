package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
)

func (a *app) ctxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ctx",
		Short: "Save brokers and credentials as named contexts, and pick one",
		Long: `Save a broker URL and the credentials to use there under a name, then
select one so client commands use it without --server, --user, --password.

Each of server, user and password is taken from its flag, else from
NARAD_ADDR, NARAD_USER, NARAD_PASS, else from the context named by
--context, else from the selected context, else http://127.0.0.1:7942.

Contexts live in $XDG_CONFIG_HOME/narad/contexts.json (by default
~/.config/narad/contexts.json), readable by you alone (mode 0600): it holds
the passwords in clear.`,
	}
	cmd.AddCommand(a.ctxAddCmd(), a.ctxSelectCmd(), a.ctxListCmd(), a.ctxRemoveCmd())
	return cmd
}

func (a *app) ctxAddCmd() *cobra.Command {
	var ctx savedContext
	var withPassword bool
	var typedPassword string
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "add NAME --server URL [--user USER] [--password-stdin]",
		Short: "Save a context (replacing one of the same name)",
		Long: `Save the context NAME: a broker URL, and optionally a user and a password.
The password is read from standard input with --password-stdin, one line;
it is never taken from a flag. Saving does not select the context: run
"narad ctx select NAME" for that. -o json prints the context as "ctx ls"
does: {"name", "server", "user", "password_saved"}.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			if args[0] == "" {
				return errors.New("a context needs a name")
			}
			if ctx.Server == "" {
				return errors.New("--server is required")
			}
			if err := checkServerURL(ctx.Server, false); err != nil {
				return fmt.Errorf("--server %w", err)
			}
			if cmd.Flags().Changed("password") {
				return errors.New("a saved password is read with --password-stdin, not given with --password")
			}
			cf, err := a.loadContexts()
			if err != nil {
				return err
			}
			if withPassword {
				prompt := "Password to save for " + args[0]
				if ctx.User != "" {
					prompt = "Password of " + ctx.User + " to save for " + args[0]
				}
				if ctx.Password, err = a.readSecret(prompt, false); err != nil {
					return err
				}
			}
			verb := "saved"
			if _, ok := cf.Contexts[args[0]]; ok {
				verb = "replaced"
			}
			cf.Contexts[args[0]] = ctx
			if err := cf.save(); err != nil {
				return err
			}
			return printDone(a.stdout, format, viewOf(args[0], ctx),
				fmt.Sprintf("%s context %s (%s)", verb, args[0], describeContext(ctx)))
		},
	}
	// These shadow the global --server and --user: here they are what is
	// saved, not what this command talks to (it talks to nothing).
	fs := cmd.Flags()
	fs.StringVarP(&ctx.Server, "server", "s", "", "broker URL to save (required)")
	fs.StringVarP(&ctx.User, "user", "u", "", "user name to save")
	fs.BoolVar(&withPassword, "password-stdin", false, "read a password to save from standard input")
	// -p is refused with the way to do it instead: a password typed on
	// the command line sits in the shell's history and the process list.
	fs.StringVarP(&typedPassword, "password", "p", "", "")
	_ = fs.MarkHidden("password")
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) ctxSelectCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:               "select NAME",
		Short:             "Make NAME the context client commands use",
		Long:              `Make NAME the context client commands use. -o json prints {"current": NAME}.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeContextArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			cf, err := a.loadContexts()
			if err != nil {
				return err
			}
			ctx, err := cf.lookup(args[0])
			if err != nil {
				return err
			}
			cf.Current = args[0]
			if err := cf.save(); err != nil {
				return err
			}
			return printDone(a.stdout, format, struct {
				Current string `json:"current"`
			}{args[0]}, fmt.Sprintf("selected context %s (%s)", args[0], describeContext(ctx)))
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) ctxListCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List contexts; * marks the selected one",
		Long: `List the saved contexts; * marks the selected one. Passwords are never
shown, only whether one is saved. -o json prints
{"current": NAME, "contexts": [{"name", "server", "user", "password_saved"}]}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			cf, err := a.loadContexts()
			if err != nil {
				return err
			}
			names := make([]string, 0, len(cf.Contexts))
			for name := range cf.Contexts {
				names = append(names, name)
			}
			slices.Sort(names)
			if format == formatJSON {
				return printJSON(a.stdout, contextsView(cf, names))
			}
			tw := newTable(a.stdout)
			// Passwords stay in the file: the listing only says if one is saved.
			fmt.Fprintln(tw, "CURRENT\tNAME\tSERVER\tUSER\tPASSWORD")
			for _, name := range names {
				c := cf.Contexts[name]
				mark := ""
				if name == cf.Current {
					mark = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", mark, name, c.Server, orDash(c.User), savedOrDash(c.Password))
			}
			return tw.Flush()
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// contextView is one context as "ctx ls -o json" shows it: never the
// password itself.
type contextView struct {
	Name          string `json:"name"`
	Server        string `json:"server"`
	User          string `json:"user,omitempty"`
	PasswordSaved bool   `json:"password_saved"`
}

func contextsView(cf *contextFile, names []string) any {
	views := make([]contextView, 0, len(names))
	for _, name := range names {
		views = append(views, viewOf(name, cf.Contexts[name]))
	}
	return struct {
		Current  string        `json:"current"`
		Contexts []contextView `json:"contexts"`
	}{cf.Current, views}
}

// viewOf is the context saved as name, as "ctx ls -o json" shows it.
func viewOf(name string, c savedContext) contextView {
	return contextView{Name: name, Server: c.Server, User: c.User, PasswordSaved: c.Password != ""}
}

func (a *app) ctxRemoveCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:               "rm NAME",
		Aliases:           []string{"delete"},
		Short:             "Delete a context (and unselect it if it was selected)",
		Long:              `Delete the context NAME. -o json prints {"name": NAME, "removed": true}.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeContextArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			cf, err := a.loadContexts()
			if err != nil {
				return err
			}
			if _, err := cf.lookup(args[0]); err != nil {
				return err
			}
			delete(cf.Contexts, args[0])
			if cf.Current == args[0] {
				cf.Current = ""
			}
			if err := cf.save(); err != nil {
				return err
			}
			return printDone(a.stdout, format, struct {
				Name    string `json:"name"`
				Removed bool   `json:"removed"`
			}{args[0], true}, "removed context "+args[0])
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// describeContext is a context without its password:
// "http://h:7942, user alice, password saved".
func describeContext(c savedContext) string {
	s := c.Server + ", no user"
	if c.User != "" {
		s = c.Server + ", user " + c.User
	}
	if c.Password != "" {
		s += ", password saved"
	}
	return s
}

func savedOrDash(secret string) string {
	if secret == "" {
		return "-"
	}
	return "saved"
}
