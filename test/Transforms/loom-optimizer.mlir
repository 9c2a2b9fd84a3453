// RUN: loom-opt %s -loom-optimizer="lr=0.1" | FileCheck %s --check-prefix=SGD
// RUN: loom-opt %s -loom-optimizer="lr=0.1 momentum=0.9" | FileCheck %s --check-prefix=MOM
// RUN: loom-opt %s -loom-optimizer="lr=0.1 momentum=0.9 nesterov=true weight-decay=0.5" | FileCheck %s --check-prefix=NEST
// RUN: loom-opt %s -loom-optimizer="optimizer=adamw lr=0.2" | FileCheck %s --check-prefix=ADAMW
// RUN: loom-opt %s -loom-optimizer="optimizer=adam lr=0.1 weight-decay=0.5" | FileCheck %s --check-prefix=ADAM
// RUN: loom-opt %s -loom-optimizer="lr=0.1 clip-grad-norm=2.0" | FileCheck %s --check-prefix=CLIP
// RUN: loom-opt %s -loom-optimizer="lr=0.1 schedule=warmup warmup-steps=4" | FileCheck %s --check-prefix=WARM
// RUN: loom-opt %s -loom-optimizer="optimizer=adamw lr=0.1 schedule=cosine warmup-steps=1 total-steps=3 min-lr=0.01" | FileCheck %s --check-prefix=COS

// A gradient function as loom-autodiff writes it: parameters w and b with a
// data argument between them; the gradients are written by hand.
func.func @f_grad(%w: tensor<4xf32> {loom.param, loom.name = "w"},
                  %x: tensor<4xf32> {loom.name = "x"},
                  %b: tensor<f32> {loom.param, loom.name = "b"})
    -> (tensor<f32> {loom.name = "loss"},
        tensor<4xf32> {loom.name = "grad.w", loom.grad_of = 0 : i64},
        tensor<f32> {loom.name = "grad.b", loom.grad_of = 2 : i64}) {
  %0 = loom.mul %w, %x : tensor<4xf32>
  %1 = loom.reduce_sum %0, dims = [0] : tensor<4xf32> -> tensor<f32>
  %loss = loom.add %1, %b : tensor<f32>
  %one = loom.constant dense<1.0> : tensor<f32>
  return %loss, %x, %one : tensor<f32>, tensor<4xf32>, tensor<f32>
}

// @f_grad stays; @f_step follows it and holds its body (not a call).
// SGD-LABEL: func.func @f_grad(
// SGD-LABEL: func.func @f_step(
// SGD-SAME: %[[W:.*]]: tensor<4xf32> {loom.name = "w", loom.param},
// SGD-SAME: %[[B:.*]]: tensor<f32> {loom.name = "b", loom.param},
// SGD-SAME: %[[STEP:.*]]: tensor<f32> {loom.name = "step", loom.state},
// SGD-SAME: %[[X:.*]]: tensor<4xf32> {loom.name = "x"})
// SGD-SAME: -> (tensor<f32> {loom.name = "loss"},
// SGD-SAME: tensor<4xf32> {loom.name = "w", loom.updates = 0 : i64},
// SGD-SAME: tensor<f32> {loom.name = "b", loom.updates = 1 : i64},
// SGD-SAME: tensor<f32> {loom.name = "step", loom.updates = 2 : i64})
// SGD-NOT: call
// SGD: %[[PROD:.*]] = loom.mul %[[W]], %[[X]]
// SGD: %[[SUM:.*]] = loom.reduce_sum %[[PROD]]
// SGD: %[[LOSS:.*]] = loom.add %[[SUM]], %[[B]]
// SGD: %[[GB:.*]] = loom.constant {{.*}}dense<1.000000e+00>{{.*}} : tensor<f32>
// SGD: %[[ONE:.*]] = loom.constant {{.*}}dense<1.000000e+00>{{.*}} : tensor<f32>
// SGD: %[[NSTEP:.*]] = loom.add %[[STEP]], %[[ONE]]{{.*}} : tensor<f32>
// p -= lr * g, lr a splat constant.
// SGD: %[[LRW:.*]] = loom.constant {{.*}}dense<1.000000e-01>{{.*}} : tensor<4xf32>
// SGD: %[[UW:.*]] = loom.mul %[[LRW]], %[[X]]
// SGD: %[[NW:.*]] = loom.sub %[[W]], %[[UW]]
// SGD: %[[LRB:.*]] = loom.constant {{.*}}dense<1.000000e-01>{{.*}} : tensor<f32>
// SGD: %[[UB:.*]] = loom.mul %[[LRB]], %[[GB]]
// SGD: %[[NB:.*]] = loom.sub %[[B]], %[[UB]]
// SGD: return %[[LOSS]], %[[NW]], %[[NB]], %[[NSTEP]]

// Momentum state per parameter after the step counter; buf = m * buf + g.
// MOM-LABEL: func.func @f_step(
// MOM-SAME: %[[W:[^:]*]]: tensor<4xf32> {loom.name = "w", loom.param},
// MOM-SAME: %{{.*}}: tensor<f32> {loom.name = "b", loom.param},
// MOM-SAME: %{{.*}}: tensor<f32> {loom.name = "step", loom.state},
// MOM-SAME: %[[MW:[^:]*]]: tensor<4xf32> {loom.name = "momentum.w", loom.state},
// MOM-SAME: %{{.*}}: tensor<f32> {loom.name = "momentum.b", loom.state},
// MOM-SAME: %[[X:[^:]*]]: tensor<4xf32> {loom.name = "x"})
// MOM-SAME: tensor<4xf32> {loom.name = "momentum.w", loom.updates = 3 : i64},
// MOM-SAME: tensor<f32> {loom.name = "momentum.b", loom.updates = 4 : i64})
// MOM: %[[M:.*]] = loom.constant {{.*}}dense<0.899999976>{{.*}} : tensor<4xf32>
// MOM: %[[DECAYED:.*]] = loom.mul %[[MW]], %[[M]]
// MOM: %[[BUF:.*]] = loom.add %[[DECAYED]], %[[X]]
// MOM: %[[LR:.*]] = loom.constant {{.*}}dense<1.000000e-01>{{.*}} : tensor<4xf32>
// MOM: %[[U:.*]] = loom.mul %[[LR]], %[[BUF]]
// MOM: %[[NW:.*]] = loom.sub %[[W]], %[[U]]
// MOM: return %{{.*}}, %[[NW]], %{{.*}}, %{{.*}}, %[[BUF]], %{{.*}} :

// Nesterov with weight decay: g += wd * p; buf = m * buf + g; g += m * buf.
// NEST-LABEL: func.func @f_step(
// NEST-SAME: %[[W:[^:]*]]: tensor<4xf32> {loom.name = "w", loom.param},
// NEST-SAME: %[[MW:[^:]*]]: tensor<4xf32> {loom.name = "momentum.w", loom.state},
// NEST-SAME: %[[X:[^:]*]]: tensor<4xf32> {loom.name = "x"})
// NEST: %[[WD:.*]] = loom.constant {{.*}}dense<5.000000e-01>{{.*}} : tensor<4xf32>
// NEST: %[[WDP:.*]] = loom.mul %[[WD]], %[[W]]
// NEST: %[[G:.*]] = loom.add %[[X]], %[[WDP]]
// NEST: %[[M:.*]] = loom.constant {{.*}}dense<0.899999976>{{.*}} : tensor<4xf32>
// NEST: %[[DECAYED:.*]] = loom.mul %[[MW]], %[[M]]
// NEST: %[[BUF:.*]] = loom.add %[[DECAYED]], %[[G]]
// NEST: %[[MB:.*]] = loom.mul %[[M]], %[[BUF]]
// NEST: %[[NG:.*]] = loom.add %[[G]], %[[MB]]
// NEST: %[[LR:.*]] = loom.constant {{.*}}dense<1.000000e-01>{{.*}} : tensor<4xf32>
// NEST: %[[U:.*]] = loom.mul %[[LR]], %[[NG]]
// NEST: loom.sub %[[W]], %[[U]]

// AdamW (default weight decay 0.01): p *= 1 - lr * wd, the moments, then
// p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps), with
// bc = -tanh(t ln(beta) / 2) * (exp(t ln(beta)) + 1).
// ADAMW-LABEL: func.func @f_step(
// ADAMW-SAME: %[[W:[^:]*]]: tensor<4xf32> {loom.name = "w", loom.param},
// ADAMW-SAME: %{{.*}}: tensor<f32> {loom.name = "b", loom.param},
// ADAMW-SAME: %[[STEP:[^:]*]]: tensor<f32> {loom.name = "step", loom.state},
// ADAMW-SAME: %[[M:[^:]*]]: tensor<4xf32> {loom.name = "exp_avg.w", loom.state},
// ADAMW-SAME: %[[V:[^:]*]]: tensor<4xf32> {loom.name = "exp_avg_sq.w", loom.state},
// ADAMW-SAME: %{{.*}}: tensor<f32> {loom.name = "exp_avg.b", loom.state},
// ADAMW-SAME: %{{.*}}: tensor<f32> {loom.name = "exp_avg_sq.b", loom.state},
// ADAMW-SAME: %[[X:[^:]*]]: tensor<4xf32> {loom.name = "x"})
// ADAMW-SAME: tensor<4xf32> {loom.name = "exp_avg.w", loom.updates = 3 : i64},
// ADAMW-SAME: tensor<4xf32> {loom.name = "exp_avg_sq.w", loom.updates = 4 : i64},
// ADAMW-SAME: tensor<f32> {loom.name = "exp_avg.b", loom.updates = 5 : i64},
// ADAMW-SAME: tensor<f32> {loom.name = "exp_avg_sq.b", loom.updates = 6 : i64})
// ADAMW: %[[T:.*]] = loom.add %[[STEP]], %[[ONE:[0-9]+]]{{.*}} : tensor<f32>
// ADAMW: %[[LR:.*]] = loom.constant {{.*}}dense<2.000000e-01>{{.*}} : tensor<f32>
// ln(0.9) / 2
// ADAMW: %[[H1:.*]] = loom.constant {{.*}}dense<-0.0526802577>{{.*}} : tensor<f32>
// ADAMW: %[[X1:.*]] = loom.mul %[[T]], %[[H1]]
// ADAMW: %[[D1:.*]] = loom.add %[[X1]], %[[X1]]
// ADAMW: %[[E1:.*]] = loom.exp %[[D1]]
// ADAMW: %[[TH1:.*]] = loom.tanh %[[X1]]
// ADAMW: %[[NT1:.*]] = loom.neg %[[TH1]]
// ADAMW: %[[EP1:.*]] = loom.add %[[E1]], %[[ONE]]
// ADAMW: %[[BC1:.*]] = loom.mul %[[NT1]], %[[EP1]]
// ADAMW: %[[SS:.*]] = loom.div %[[LR]], %[[BC1]]
// ln(0.999) / 2
// ADAMW: loom.constant {{.*}}dense<-5.00250142E-4>{{.*}} : tensor<f32>
// ADAMW: %[[BC2S:.*]] = loom.sqrt %{{[0-9]+}}{{.*}} : tensor<f32>
// 1 - 0.2 * 0.01
// ADAMW: %[[DECAY:.*]] = loom.constant {{.*}}dense<9.980000e-01>{{.*}} : tensor<4xf32>
// ADAMW: %[[PW:.*]] = loom.mul %[[W]], %[[DECAY]]
// ADAMW: %[[W1:.*]] = loom.constant {{.*}}dense<1.000000e-01>{{.*}} : tensor<4xf32>
// ADAMW: %[[GM:.*]] = loom.sub %[[X]], %[[M]]
// ADAMW: %[[WGM:.*]] = loom.mul %[[W1]], %[[GM]]
// ADAMW: %[[NM:.*]] = loom.add %[[M]], %[[WGM]]
// ADAMW: %[[B2:.*]] = loom.constant {{.*}}dense<9.990000e-01>{{.*}} : tensor<4xf32>
// ADAMW: %[[VB:.*]] = loom.mul %[[V]], %[[B2]]
// ADAMW: %[[R2:.*]] = loom.constant {{.*}}dense<1.000000e-03>{{.*}} : tensor<4xf32>
// ADAMW: %[[RG:.*]] = loom.mul %[[R2]], %[[X]]
// ADAMW: %[[RGG:.*]] = loom.mul %[[RG]], %[[X]]
// ADAMW: %[[NV:.*]] = loom.add %[[VB]], %[[RGG]]
// ADAMW: %[[SQ:.*]] = loom.sqrt %[[NV]]
// ADAMW: %[[BC2B:.*]] = loom.broadcast %[[BC2S]], dims = []{{.*}} : tensor<f32> -> tensor<4xf32>
// ADAMW: %[[Q:.*]] = loom.div %[[SQ]], %[[BC2B]]
// ADAMW: %[[EPS:.*]] = loom.constant {{.*}}dense<9.99999993E-9>{{.*}} : tensor<4xf32>
// ADAMW: %[[DEN:.*]] = loom.add %[[Q]], %[[EPS]]
// ADAMW: %[[SSB:.*]] = loom.broadcast %[[SS]], dims = []{{.*}} : tensor<f32> -> tensor<4xf32>
// ADAMW: %[[NUM:.*]] = loom.mul %[[SSB]], %[[NM]]
// ADAMW: %[[UPD:.*]] = loom.div %[[NUM]], %[[DEN]]
// ADAMW: %[[NW:.*]] = loom.sub %[[PW]], %[[UPD]]
// ADAMW: return %{{.*}}, %[[NW]], %{{.*}}, %[[T]], %[[NM]], %[[NV]], %{{.*}}, %{{.*}} :

// Adam's weight decay is L2 on the gradient, not decoupled.
// ADAM-LABEL: func.func @f_step(
// ADAM-SAME: %[[W:[^:]*]]: tensor<4xf32> {loom.name = "w", loom.param},
// ADAM-SAME: %[[X:[^:]*]]: tensor<4xf32> {loom.name = "x"})
// ADAM: %[[WD:.*]] = loom.constant {{.*}}dense<5.000000e-01>{{.*}} : tensor<4xf32>
// ADAM: %[[WDP:.*]] = loom.mul %[[WD]], %[[W]]
// ADAM: %[[G:.*]] = loom.add %[[X]], %[[WDP]]
// ADAM: loom.sub %[[G]], %{{.*}} : tensor<4xf32>
// ADAM: loom.sub %[[W]], %{{.*}} : tensor<4xf32>

// Clipping: norm of the per-tensor norms, coef = min(max / (norm + 1e-6), 1).
// CLIP-LABEL: func.func @f_step(
// CLIP-SAME: %[[X:[^:]*]]: tensor<4xf32> {loom.name = "x"})
// CLIP: %[[GB:.*]] = loom.constant {{.*}}dense<1.000000e+00>{{.*}} : tensor<f32>
// CLIP: %[[ONE:.*]] = loom.constant {{.*}}dense<1.000000e+00>{{.*}} : tensor<f32>
// CLIP: %[[SQW:.*]] = loom.mul %[[X]], %[[X]]
// CLIP: %[[SUMW:.*]] = loom.reduce_sum %[[SQW]], dims = [0]{{.*}} : tensor<4xf32> -> tensor<f32>
// CLIP: %[[NW:.*]] = loom.sqrt %[[SUMW]]
// CLIP: %[[NW2:.*]] = loom.mul %[[NW]], %[[NW]]
// CLIP: %[[SQB:.*]] = loom.mul %[[GB]], %[[GB]]
// CLIP: %[[NB:.*]] = loom.sqrt %[[SQB]]
// CLIP: %[[NB2:.*]] = loom.mul %[[NB]], %[[NB]]
// CLIP: %[[TOT2:.*]] = loom.add %[[NW2]], %[[NB2]]
// CLIP: %[[TOT:.*]] = loom.sqrt %[[TOT2]]
// CLIP: %[[MAX:.*]] = loom.constant {{.*}}dense<2.000000e+00>{{.*}} : tensor<f32>
// CLIP: %[[TINY:.*]] = loom.constant {{.*}}dense<9.99999997E-7>{{.*}} : tensor<f32>
// CLIP: %[[DEN:.*]] = loom.add %[[TOT]], %[[TINY]]
// CLIP: %[[RATIO:.*]] = loom.div %[[MAX]], %[[DEN]]
// CLIP: %[[COEF:.*]] = loom.min %[[RATIO]], %[[ONE]]
// CLIP: %[[COEFW:.*]] = loom.broadcast %[[COEF]], dims = []{{.*}} : tensor<f32> -> tensor<4xf32>
// CLIP: %[[CW:.*]] = loom.mul %[[X]], %[[COEFW]]
// CLIP: %[[CB:.*]] = loom.mul %[[GB]], %[[COEF]]
// CLIP: loom.mul %{{.*}}, %[[CW]]
// CLIP: loom.mul %{{.*}}, %[[CB]]

// Warmup: rates lr * (e + 1) / 4 for e = 0..3, read at min(max(step, 0), 3).
// WARM-LABEL: func.func @f_step(
// WARM-SAME: %[[W:[^:]*]]: tensor<4xf32> {loom.name = "w", loom.param},
// WARM-SAME: %[[STEP:[^:]*]]: tensor<f32> {loom.name = "step", loom.state},
// WARM-SAME: %[[X:[^:]*]]: tensor<4xf32> {loom.name = "x"})
// WARM: %[[TABLE:.*]] = loom.constant {{.*}}dense<[2.500000e-02, 5.000000e-02, 7.500000e-02, 1.000000e-01]>{{.*}} : tensor<4xf32>
// WARM: %[[I:.*]] = loom.convert %[[STEP]]{{.*}} : tensor<f32> -> tensor<i64>
// WARM: %[[LO:.*]] = loom.constant {{.*}}dense<0>{{.*}} : tensor<i64>
// WARM: %[[HI:.*]] = loom.constant {{.*}}dense<3>{{.*}} : tensor<i64>
// WARM: %[[I0:.*]] = loom.max %[[I]], %[[LO]]{{.*}} : tensor<i64>
// WARM: %[[I1:.*]] = loom.min %[[I0]], %[[HI]]{{.*}} : tensor<i64>
// WARM: %[[LR:.*]] = loom.gather %[[TABLE]][%[[I1]]], axis = 0{{.*}} : (tensor<4xf32>, tensor<i64>) -> tensor<f32>
// WARM: %[[LRW:.*]] = loom.broadcast %[[LR]], dims = []{{.*}} : tensor<f32> -> tensor<4xf32>
// WARM: %[[U:.*]] = loom.mul %[[LRW]], %[[X]]
// WARM: loom.sub %[[W]], %[[U]]

// Cosine with one warmup step to total-steps 3, then min-lr: e = 0..3.
// AdamW's decay factor follows the scheduled rate.
// COS-LABEL: func.func @f_step(
// COS: %[[TABLE:.*]] = loom.constant {{.*}}dense<[1.000000e-01, 1.000000e-01, 5.500000e-02, 0.00999999977]>{{.*}} : tensor<4xf32>
// COS: %[[HI:.*]] = loom.constant {{.*}}dense<3>{{.*}} : tensor<i64>
// COS: %[[LR:.*]] = loom.gather %[[TABLE]]
// COS: %[[SS:.*]] = loom.div %[[LR]], %{{.*}} : tensor<f32>
// COS: %[[WD:.*]] = loom.constant {{.*}}dense<0.00999999977>{{.*}} : tensor<f32>
// COS: %[[LRWD:.*]] = loom.mul %[[LR]], %[[WD]]
// COS: %[[DECAY:.*]] = loom.sub %{{.*}}, %[[LRWD]]{{.*}} : tensor<f32>
// COS: loom.broadcast %[[DECAY]], dims = []{{.*}} : tensor<f32> -> tensor<4xf32>
