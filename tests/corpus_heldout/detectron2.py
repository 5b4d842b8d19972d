"""Detection and segmentation heads as first written: detectron2 (RetinaNet's ``permute_to_N_HWA_K``,
PointRend's ``point_sample`` and ``calculate_uncertainty``, the box coder's ``get_deltas``) and
Mask2Former's matcher costs (``batch_dice_loss``, ``batch_sigmoid_ce_loss``).

Changed from the projects' code: ``import ppy``, ``@ppy.opt(3)`` and parameter annotations only.
``get_deltas`` is the method ``Box2BoxTransform.get_deltas``: ``self.weights`` is the parameter
``weights``.
"""

from typing import Tuple

import ppy
import torch
import torch.nn.functional as F

KIND = {
    "get_deltas": "by-design",  # asserts `(src_widths > 0).all().item()`, a tensor's value
}


def _boxes(n, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 10
    wh = torch.rand(n, 2, generator=g) * 5 + 0.5
    return torch.cat((xy, xy + wh), dim=1).to(device)


@ppy.opt(3)
def permute_to_N_HWA_K(tensor: torch.Tensor, K: int) -> torch.Tensor:
    """
    Transpose/reshape a tensor from (N, (Ai x K), H, W) to (N, (HxWxAi), K)
    """
    assert tensor.dim() == 4, tensor.shape
    N, _, H, W = tensor.shape
    tensor = tensor.view(N, -1, K, H, W)
    tensor = tensor.permute(0, 3, 4, 1, 2)
    tensor = tensor.reshape(N, -1, K)  # Size=(N,HWA,K)
    return tensor


@permute_to_N_HWA_K.samples
def _(device):
    yield torch.randn(2, 3 * 5, 4, 6, device=device), 5


@ppy.opt(3)
def point_sample(input: torch.Tensor, point_coords: torch.Tensor, **kwargs) -> torch.Tensor:
    """
    A wrapper around :function:`torch.nn.functional.grid_sample` to support 3D point_coords tensors.
    Unlike :function:`torch.nn.functional.grid_sample` it assumes `point_coords` to lie inside
    [0, 1] x [0, 1] square.
    """
    add_dim = False
    if point_coords.dim() == 3:
        add_dim = True
        point_coords = point_coords.unsqueeze(2)
    output = F.grid_sample(input, 2.0 * point_coords - 1.0, **kwargs)
    if add_dim:
        output = output.squeeze(3)
    return output


@point_sample.samples
def _(device):
    yield torch.randn(2, 3, 8, 8, device=device), torch.rand(2, 5, 2, device=device)
    yield ppy.Call(torch.randn(2, 3, 8, 8, device=device), torch.rand(2, 5, 2, device=device), align_corners=False)


@ppy.opt(3)
def calculate_uncertainty(sem_seg_logits: torch.Tensor) -> torch.Tensor:
    """
    For each location of the prediction `sem_seg_logits` we estimate uncerainty as the
        difference between top first and top second predicted logits.
    """
    top2_scores = torch.topk(sem_seg_logits, k=2, dim=1)[0]
    return (top2_scores[:, 1] - top2_scores[:, 0]).unsqueeze(1)


@calculate_uncertainty.samples
def _(device):
    yield torch.randn(2, 5, 4, 4, device=device),


@ppy.opt(3)
def get_deltas(src_boxes: torch.Tensor, target_boxes: torch.Tensor,
               weights: Tuple[float, float, float, float]) -> torch.Tensor:
    """
    Get box regression transformation deltas (dx, dy, dw, dh) that can be used
    to transform the `src_boxes` into the `target_boxes`.
    """
    assert isinstance(src_boxes, torch.Tensor), type(src_boxes)
    assert isinstance(target_boxes, torch.Tensor), type(target_boxes)

    src_widths = src_boxes[:, 2] - src_boxes[:, 0]
    src_heights = src_boxes[:, 3] - src_boxes[:, 1]
    src_ctr_x = src_boxes[:, 0] + 0.5 * src_widths
    src_ctr_y = src_boxes[:, 1] + 0.5 * src_heights

    target_widths = target_boxes[:, 2] - target_boxes[:, 0]
    target_heights = target_boxes[:, 3] - target_boxes[:, 1]
    target_ctr_x = target_boxes[:, 0] + 0.5 * target_widths
    target_ctr_y = target_boxes[:, 1] + 0.5 * target_heights

    wx, wy, ww, wh = weights
    dx = wx * (target_ctr_x - src_ctr_x) / src_widths
    dy = wy * (target_ctr_y - src_ctr_y) / src_heights
    dw = ww * torch.log(target_widths / src_widths)
    dh = wh * torch.log(target_heights / src_heights)

    deltas = torch.stack((dx, dy, dw, dh), dim=1)
    assert (src_widths > 0).all().item(), "Input boxes to Box2BoxTransform are not valid!"
    return deltas


@get_deltas.samples
def _(device):
    yield _boxes(6, device), _boxes(6, device, seed=1), (10.0, 10.0, 5.0, 5.0)


@ppy.opt(3)
def batch_dice_loss(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """
    Compute the DICE loss, similar to generalized IOU for masks
    """
    inputs = inputs.sigmoid()
    inputs = inputs.flatten(1)
    numerator = 2 * torch.einsum("nc,mc->nm", inputs, targets)
    denominator = inputs.sum(-1)[:, None] + targets.sum(-1)[None, :]
    loss = 1 - (numerator + 1) / (denominator + 1)
    return loss


@batch_dice_loss.samples
def _(device):
    yield torch.randn(4, 3, 5, device=device), (torch.rand(6, 15, device=device) > 0.5).float()


@ppy.opt(3)
def batch_sigmoid_ce_loss(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    hw = inputs.shape[1]

    pos = F.binary_cross_entropy_with_logits(
        inputs, torch.ones_like(inputs), reduction="none"
    )
    neg = F.binary_cross_entropy_with_logits(
        inputs, torch.zeros_like(inputs), reduction="none"
    )

    loss = torch.einsum("nc,mc->nm", pos, targets) + torch.einsum(
        "nc,mc->nm", neg, (1 - targets)
    )

    return loss / hw


@batch_sigmoid_ce_loss.samples
def _(device):
    yield torch.randn(4, 15, device=device), (torch.rand(6, 15, device=device) > 0.5).float()
