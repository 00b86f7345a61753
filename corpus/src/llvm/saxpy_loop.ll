; Grid-stride SAXPY/DAXPY loops using llvm.fma, phi nodes and 64-bit indexing.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare float @llvm.fma.f32(float, float, float)
declare double @llvm.fma.f64(double, double, double)

define void @saxpy_grid_stride(float %alpha, float addrspace(1)* noalias %x, float addrspace(1)* noalias %y, i64 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %b = mul i32 %ctaid, %ntid
  %s32 = add i32 %b, %tid
  %start = zext i32 %s32 to i64
  %st32 = mul i32 %nctaid, %ntid
  %stride = zext i32 %st32 to i64
  %c0 = icmp slt i64 %start, %n
  br i1 %c0, label %loop, label %exit
loop:
  %i = phi i64 [ %start, %entry ], [ %next, %loop ]
  %px = getelementptr inbounds float, float addrspace(1)* %x, i64 %i
  %py = getelementptr inbounds float, float addrspace(1)* %y, i64 %i
  %vx = load float, float addrspace(1)* %px, align 4
  %vy = load float, float addrspace(1)* %py, align 4
  %r = call float @llvm.fma.f32(float %alpha, float %vx, float %vy)
  store float %r, float addrspace(1)* %py, align 4
  %next = add i64 %i, %stride
  %c = icmp slt i64 %next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

define void @daxpy(double %alpha, double addrspace(1)* noalias %x, double addrspace(1)* noalias %y, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = mul i32 %ctaid, %ntid
  %i = add i32 %b, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %body, label %exit
body:
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds double, double addrspace(1)* %x, i64 %idx
  %py = getelementptr inbounds double, double addrspace(1)* %y, i64 %idx
  %vx = load double, double addrspace(1)* %px, align 8
  %vy = load double, double addrspace(1)* %py, align 8
  %r = call double @llvm.fma.f64(double %alpha, double %vx, double %vy)
  store double %r, double addrspace(1)* %py, align 8
  br label %exit
exit:
  ret void
}

!nvvm.annotations = !{!0, !1, !2}
!0 = !{void (float, float addrspace(1)*, float addrspace(1)*, i64)* @saxpy_grid_stride, !"kernel", i32 1}
!1 = !{void (double, double addrspace(1)*, double addrspace(1)*, i32)* @daxpy, !"kernel", i32 1}
!2 = !{void (double, double addrspace(1)*, double addrspace(1)*, i32)* @daxpy, !"maxntidx", i32 256}
