"""The side-by-side harness's models (bench_overhead.py, issue 12): the
MLP, the transformer block, the small CNN, the decoder step and
MobileNetV3-Small, weights and inputs from fixed seeds. torch is imported
inside, so the harness imports without it."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["mlp", "transformer", "cnn", "decoder", "mobilenet"]

def build_model(name, device="cuda"):
    """(module in eval mode on device, example args); weights and inputs
    from fixed seeds."""
    import torch
    import torch.nn.functional as F
    from torch import nn
    torch.manual_seed(1234)
    gen = torch.Generator().manual_seed(99)

    def rand(*shape):
        return torch.randn(*shape, generator=gen).to(device)

    if name == "mlp":
        m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 16))
        args = (rand(4, 64),)
    elif name == "transformer":
        sys.path.insert(0, HERE)
        import models
        m = models.TransformerBlock(d=512, heads=8)
        args = (rand(1, 128, 512),)
    elif name == "cnn":
        class CNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(3, 16, 3, padding=1)
                self.c2 = nn.Conv2d(16, 32, 3, padding=1)
                self.c3 = nn.Conv2d(32, 64, 3, padding=1)
                self.fc = nn.Linear(64, 10)

            def forward(self, x):
                x = F.max_pool2d(torch.relu(self.c1(x)), 2)
                x = F.max_pool2d(torch.relu(self.c2(x)), 2)
                x = F.adaptive_avg_pool2d(torch.relu(self.c3(x)), 1)
                return self.fc(torch.flatten(x, 1))
        m = CNN()
        args = (rand(1, 3, 64, 64),)
    elif name == "decoder":
        sys.path.insert(0, HERE)
        import models

        # The transformer block's layers (same order, so the same weights
        # from the seed), one token attending to a KV cache.
        class DecoderStep(models.TransformerBlock):
            def forward(self, x, k_cache, v_cache):
                b, t, d = x.shape
                q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
                shape = (b, t, self.heads, d // self.heads)
                q, k, v = (z.reshape(shape).transpose(1, 2) for z in (q, k, v))
                keys = torch.cat([k_cache, k], dim=2)
                values = torch.cat([v_cache, v], dim=2)
                a = F.scaled_dot_product_attention(q, keys, values)
                x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
                y = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
                return y, k.contiguous(), v.contiguous()
        m = DecoderStep(d=512, heads=8)
        args = (rand(1, 1, 512), rand(1, 8, 128, 64), rand(1, 8, 128, 64))
    elif name == "mobilenet":
        m = mobilenet_v3_small()
        args = (rand(1, 3, 64, 64),)
    else:
        raise ValueError(f"unknown model {name!r}; known: {MODELS}")
    return m.to(device).eval(), args


def mobilenet_v3_small(num_classes=1000):
    """MobileNetV3-Small as in the paper (Howard et al. 2019, table 2),
    written out here: torchvision and timm are not on the GPU machine."""
    from torch import nn

    def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups,
                            bias=False), nn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(act())
        return layers

    class SqueezeExcite(nn.Module):
        def __init__(self, ch):
            super().__init__()
            mid = max(8, (ch // 4 + 4) // 8 * 8)
            self.fc1 = nn.Conv2d(ch, mid, 1)
            self.fc2 = nn.Conv2d(mid, ch, 1)

        def forward(self, x):
            s = x.mean((2, 3), keepdim=True)
            s = nn.functional.hardsigmoid(self.fc2(nn.functional.relu(self.fc1(s))))
            return x * s

    class Block(nn.Module):
        def __init__(self, cin, k, exp, cout, se, act, stride):
            super().__init__()
            layers = [] if exp == cin else conv_bn(cin, exp, 1, act=act)
            layers += conv_bn(exp, exp, k, stride, groups=exp, act=act)
            if se:
                layers.append(SqueezeExcite(exp))
            layers += conv_bn(exp, cout, 1)
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    RE, HS = nn.ReLU, nn.Hardswish
    cfg = [(3, 16, 16, True, RE, 2), (3, 72, 24, False, RE, 2),
           (3, 88, 24, False, RE, 1), (5, 96, 40, True, HS, 2),
           (5, 240, 40, True, HS, 1), (5, 240, 40, True, HS, 1),
           (5, 120, 48, True, HS, 1), (5, 144, 48, True, HS, 1),
           (5, 288, 96, True, HS, 2), (5, 576, 96, True, HS, 1),
           (5, 576, 96, True, HS, 1)]
    layers = conv_bn(3, 16, 3, 2, act=HS)
    cin = 16
    for k, exp, cout, se, act, stride in cfg:
        layers.append(Block(cin, k, exp, cout, se, act, stride))
        cin = cout
    layers += conv_bn(cin, 576, 1, act=HS)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(576, 1024),
               HS(), nn.Linear(1024, num_classes)]
    return nn.Sequential(*layers)
