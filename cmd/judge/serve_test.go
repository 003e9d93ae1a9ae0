package main

import "testing"

// judge serve refuses a proxy list or public URL it cannot use, from a
// flag or from the environment, before it opens anything.
func TestServeRefusesBadProxyOrURL(t *testing.T) {
	for _, c := range []struct {
		name, env, value string
		args             []string
	}{
		{name: "flag proxy", args: []string{"--trusted-proxy", "proxy.example"}},
		{name: "flag proxy range", args: []string{"--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "10.0.0.0/33"}},
		{name: "flag URL", args: []string{"--public-url", "judge.example.edu"}},
		{name: "env proxy", env: "CTRLJUDGE_TRUSTED_PROXIES", value: "10.0.0"},
		{name: "env URL", env: "CTRLJUDGE_PUBLIC_URL", value: "ftp://judge.example.edu"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(c.env, c.value)
			}
			args := append([]string{"--data", t.TempDir(), "--addr", "127.0.0.1:0"}, c.args...)
			if code := cmdServe(args); code == 0 {
				t.Errorf("judge serve %v (%s=%q) started", c.args, c.env, c.value)
			}
		})
	}
}
