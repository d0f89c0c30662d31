package main

// The cost of client-go's fake clientset (fake.NewClientset, its object
// tracker) for what the runtime's fake apiserver bench measures
// (runtime/benches/fake.rs): 10,000 creates, then one list of them.
//
//	go test -run '^$' -bench FakeClientset -benchtime 5x

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const fakeObjects = 10_000

func BenchmarkFakeClientsetCreate10000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		fillFake(b)
	}
}

func BenchmarkFakeClientsetList10000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		client := fillFake(b)
		b.StartTimer()
		list, err := client.CoreV1().ConfigMaps("ns").List(context.Background(), metav1.ListOptions{})
		if err != nil || len(list.Items) != fakeObjects {
			b.Fatalf("list: %d items, %v", len(list.Items), err)
		}
	}
}

func fillFake(b *testing.B) *fake.Clientset {
	client := fake.NewClientset()
	for i := 0; i < fakeObjects; i++ {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("thing-%d", i), Namespace: "ns"},
			Data:       map[string]string{"size": fmt.Sprint(i)},
		}
		if _, err := client.CoreV1().ConfigMaps("ns").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return client
}
