// Command standin stands in for a container runtime in the booted minikube
// test (test/boot, TestBootMinikube): a unit of the runtime's name runs it,
// and it holds the runtime's real CRI socket, which is all the test checks
// of a runtime. cri-o is not in Debian 12, and the real runtimes would not
// fit the test's time; nothing else about them matters to /etc.
//
//	standin serve SOCKET   listen on SOCKET (or on the socket systemd
//	                       passes, for socket-activated units) until
//	                       SIGTERM; tell systemd when ready (Type=notify)
//	standin probe SOCKET   exit 0 if something accepts a connection on SOCKET
//	standin probe-all SOCKET...
//	                       print each SOCKET that a process serves; with
//	                       -who, the processes holding it (/proc), on
//	                       stderr
//
// "Serves" means a process accepts the connection: connect alone succeeds
// on a socket nobody accepts from (the kernel queues it), as on a socket
// unit's fd that a dying service still holds.
package main
