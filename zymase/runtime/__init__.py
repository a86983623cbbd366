"""Run-time support on the Python side: the entry ABI (marshalling NumPy <-> array structs),
and the compile cache."""
