"""Box ops as first written, in the manner of a vision library's ops and detection heads: areas, IoU
and generalized IoU, format conversions, clipping, the box coder's decode, the
coordinate trick of batched NMS, and a greedy NMS loop."""

import math

import ppy
import torch

KIND = {
    "greedy_nms": "by-design",  # a while loop over the remaining boxes
}


def _boxes(n, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 10
    wh = torch.rand(n, 2, generator=g) * 5 + 0.5
    return torch.cat((xy, xy + wh), dim=1).to(device)


@ppy.opt(3)
def box_area(boxes: torch.Tensor) -> torch.Tensor:
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


@box_area.samples
def _(device):
    yield _boxes(5, device)


def _box_inter_union(boxes1, boxes2):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter, union


@ppy.opt(3)
def box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


@box_iou.samples
def _(device):
    yield _boxes(4, device), _boxes(6, device, seed=1)


@ppy.opt(3)
def generalized_box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    iou = inter / union
    lti = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rbi = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    whi = (rbi - lti).clamp(min=0)
    areai = whi[:, :, 0] * whi[:, :, 1]
    return iou - (areai - union) / areai


@generalized_box_iou.samples
def _(device):
    yield _boxes(4, device), _boxes(6, device, seed=1)


@ppy.opt(3)
def box_cxcywh_to_xyxy(x: torch.Tensor) -> torch.Tensor:
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


@box_cxcywh_to_xyxy.samples
def _(device):
    yield torch.rand(2, 7, 4, device=device)


@ppy.opt(3)
def clip_boxes_to_image(boxes: torch.Tensor, height: int, width: int) -> torch.Tensor:
    dim = boxes.dim()
    boxes_x = boxes[..., 0::2]
    boxes_y = boxes[..., 1::2]
    boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_y = boxes_y.clamp(min=0, max=height)
    clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)
    return clipped_boxes.reshape(boxes.shape)


@clip_boxes_to_image.samples
def _(device):
    yield _boxes(6, device) - 2, 8, 9


@ppy.opt(3)
def decode_boxes(rel_codes: torch.Tensor, boxes: torch.Tensor, wx: float, wy: float, ww: float, wh: float,
                 bbox_xform_clip: float = math.log(1000.0 / 16)) -> torch.Tensor:
    boxes = boxes.to(rel_codes.dtype)
    widths = boxes[:, 2] - boxes[:, 0]
    heights = boxes[:, 3] - boxes[:, 1]
    ctr_x = boxes[:, 0] + 0.5 * widths
    ctr_y = boxes[:, 1] + 0.5 * heights
    dx = rel_codes[:, 0::4] / wx
    dy = rel_codes[:, 1::4] / wy
    dw = rel_codes[:, 2::4] / ww
    dh = rel_codes[:, 3::4] / wh
    dw = torch.clamp(dw, max=bbox_xform_clip)
    dh = torch.clamp(dh, max=bbox_xform_clip)
    pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
    pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
    pred_w = torch.exp(dw) * widths[:, None]
    pred_h = torch.exp(dh) * heights[:, None]
    c_to_c_h = torch.tensor(0.5, dtype=pred_ctr_y.dtype, device=pred_h.device) * pred_h
    c_to_c_w = torch.tensor(0.5, dtype=pred_ctr_x.dtype, device=pred_w.device) * pred_w
    pred_boxes1 = pred_ctr_x - c_to_c_w
    pred_boxes2 = pred_ctr_y - c_to_c_h
    pred_boxes3 = pred_ctr_x + c_to_c_w
    pred_boxes4 = pred_ctr_y + c_to_c_h
    return torch.stack((pred_boxes1, pred_boxes2, pred_boxes3, pred_boxes4), dim=2).flatten(1)


@decode_boxes.samples
def _(device):
    yield torch.randn(5, 8, device=device), _boxes(5, device), 10.0, 10.0, 5.0, 5.0


@ppy.opt(3)
def batched_nms_offsets(boxes: torch.Tensor, idxs: torch.Tensor) -> torch.Tensor:
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    return boxes + offsets[:, None]


@batched_nms_offsets.samples
def _(device):
    yield _boxes(6, device), torch.tensor([0, 1, 0, 2, 1, 2], device=device)


@ppy.opt(3)
def greedy_nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
        order = order[1:][ious <= iou_threshold]
    return torch.stack(keep)


@greedy_nms.samples
def _(device):
    yield _boxes(6, device), torch.rand(6, device=device), 0.3
