; Non-inlined device functions, recursion, a switch, global (addrspace 1) and constant (addrspace 4) data.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@counter = addrspace(1) global i32 0, align 4
@coeffs = addrspace(4) constant [4 x float] [float 1.0, float 0.5, float 0.25, float 0.125], align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

define internal i32 @fib(i32 %n) noinline {
entry:
  %small = icmp slt i32 %n, 2
  br i1 %small, label %base, label %rec
base:
  ret i32 %n
rec:
  %n1 = sub i32 %n, 1
  %n2 = sub i32 %n, 2
  %a = call i32 @fib(i32 %n1)
  %b = call i32 @fib(i32 %n2)
  %s = add i32 %a, %b
  ret i32 %s
}

define internal float @activation(float %x, i32 %kind) noinline {
entry:
  switch i32 %kind, label %id [ i32 0, label %relu
                                i32 1, label %poly
                                i32 2, label %neg ]
relu:
  %pos = fcmp ogt float %x, 0.0
  %r = select i1 %pos, float %x, float 0.0
  ret float %r
poly:
  %c0p = getelementptr [4 x float], [4 x float] addrspace(4)* @coeffs, i64 0, i64 0
  %c1p = getelementptr [4 x float], [4 x float] addrspace(4)* @coeffs, i64 0, i64 1
  %c2p = getelementptr [4 x float], [4 x float] addrspace(4)* @coeffs, i64 0, i64 2
  %c0 = load float, float addrspace(4)* %c0p
  %c1 = load float, float addrspace(4)* %c1p
  %c2 = load float, float addrspace(4)* %c2p
  %t2 = fmul float %c2, %x
  %t1 = fadd float %t2, %c1
  %t0 = fmul float %t1, %x
  %p = fadd float %t0, %c0
  ret float %p
neg:
  %ng = fneg float %x
  ret float %ng
id:
  ret float %x
}

define void @apply_kernel(float addrspace(1)* %x, i32 addrspace(1)* %f, i32 %kind) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %i = add i32 %tid, %ctaid
  %idx = zext i32 %i to i64
  %p = getelementptr inbounds float, float addrspace(1)* %x, i64 %idx
  %v = load float, float addrspace(1)* %p
  %a = call float @activation(float %v, i32 %kind)
  store float %a, float addrspace(1)* %p
  %m = and i32 %tid, 15
  %fb = call i32 @fib(i32 %m)
  %pf = getelementptr inbounds i32, i32 addrspace(1)* %f, i64 %idx
  store i32 %fb, i32 addrspace(1)* %pf
  %old = atomicrmw add i32 addrspace(1)* @counter, i32 1 seq_cst
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, i32 addrspace(1)*, i32)* @apply_kernel, !"kernel", i32 1}
