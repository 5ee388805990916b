package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// With --cni=false minikube deploys no CNI and relies on the bridges the
// runtime packages ship, rewritten to its pod CIDR
// (cni.ConfigureDefaultBridgeCNIs -> configureAllBridgeCNIs: every subnet
// set to the CIDR, IPv6 ranges and routes dropped, podman's gateway set to
// the CIDR's first address), and on cri-o's loopback config being disabled
// (cni.ConfigureLoopbackCNI with disable set for cri-o). render does the
// same to the runtime's deferred copies; the rewrite works on the parsed
// JSON rather than on lines as minikube's sed does, so that a one-line
// config or a range without a trailing comma is rewritten too.

// cniPlugins returns the types of the plugins of a CNI config (.conf: one,
// .conflist: the list), or ok=false if data is not one.
func cniPlugins(data []byte) (types []string, ok bool) {
	var conf struct {
		Type    string `json:"type"`
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		return nil, false
	}
	if conf.Type != "" {
		types = append(types, conf.Type)
	}
	for _, p := range conf.Plugins {
		types = append(types, p.Type)
	}
	return types, len(types) > 0
}

// rewriteBridge sets every host-local subnet of a bridge config to cidr,
// as minikube's configureAllBridgeCNIs means to.
func rewriteBridge(data []byte, cidr string) ([]byte, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	if !p.Addr().Is4() {
		// minikube's own rewrite refuses one too ("is not valid ipv4 address").
		return nil, fmt.Errorf("pod CIDR %s: the runtime's bridge can only be rewritten for an IPv4 CIDR", cidr)
	}
	gateway := p.Masked().Addr().Next().String()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	n := 0
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if ipam, ok := x["ipam"].(map[string]any); ok {
				n += rewriteIPAM(ipam, cidr, gateway)
			}
			for k, v := range x {
				if k != "ipam" {
					walk(v)
				}
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(v)
	if n == 0 {
		return nil, fmt.Errorf("no host-local subnet to set to %s", cidr)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// rewriteIPAM rewrites one ipam section and says how many subnets it set.
func rewriteIPAM(ipam map[string]any, cidr, gateway string) int {
	n := 0
	setRange := func(r map[string]any) {
		r["subnet"] = cidr
		if _, ok := r["gateway"]; ok {
			r["gateway"] = gateway
		}
		// Bounds of the old subnet mean nothing in the new one.
		delete(r, "rangeStart")
		delete(r, "rangeEnd")
		n++
	}
	if _, ok := ipam["subnet"].(string); ok {
		setRange(ipam)
	}
	if sets, ok := ipam["ranges"].([]any); ok {
		var kept []any
		for _, set := range sets {
			entries, ok := set.([]any)
			if !ok || len(entries) == 0 {
				continue
			}
			first, ok := entries[0].(map[string]any)
			if !ok {
				continue
			}
			if s, _ := first["subnet"].(string); strings.Contains(s, ":") {
				continue // IPv6: minikube drops it
			}
			if len(kept) == 0 {
				setRange(first)
				kept = append(kept, []any{first})
			}
		}
		ipam["ranges"] = kept
		if len(kept) == 0 {
			delete(ipam, "ranges")
		}
	}
	if routes, ok := ipam["routes"].([]any); ok {
		ipam["routes"] = slices.DeleteFunc(routes, func(r any) bool {
			m, _ := r.(map[string]any)
			dst, _ := m["dst"].(string)
			return strings.Contains(dst, ":") // IPv6: minikube drops it
		})
	}
	return n
}
