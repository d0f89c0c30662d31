//! Test support: a real kube-apiserver on loopback.
