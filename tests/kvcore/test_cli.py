"""python -m kvcore: JSON on stdout, and bad input as one line on stderr with exit code 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import kvcore
from kvcore.cli import main

CONFIGS = Path(__file__).parent / "configs"


def run_json(capsys, *args):
    assert main([*args, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_kv_prints_bytes_per_token_and_cache_bytes(capsys):
    result = run_json(capsys, "kv", "--model", "llama-3.1-8b", "--context", "131072")
    assert result["bytes_per_token"] == 131_072
    assert result["kv_cache_bytes"] == 16 * 2**30


def test_explicit_numbers_describe_a_model(capsys):
    result = run_json(capsys, "kv", "--layers", "80", "--kv-heads", "8", "--head-dim", "128", "--q-heads", "64")
    assert result["bytes_per_token"] == 327_680


def test_explicit_mla_has_no_factor_two(capsys):
    result = run_json(capsys, "kv", "--layers", "61", "--mla-latent", "512", "--mla-rope", "64")
    assert result["bytes_per_token"] == 70_272


def test_sliding_layers_option_caps_some_layers(capsys):
    args = ["kv", "--layers", "2", "--kv-heads", "1", "--head-dim", "1", "--context", "100"]
    result = run_json(capsys, *args, "--sliding-window", "10", "--sliding-layers", "1")
    assert result["kv_cache_bytes"] == (100 + 10) * 2 * 2


def test_config_option_reads_a_hugging_face_config(capsys):
    result = run_json(capsys, "kv", "--config", str(CONFIGS / "deepseek-v3.json"))
    assert result["bytes_per_token"] == 70_272


def test_capacity_reproduces_vllm_issue_10517(capsys):
    # vLLM issue #10517: 1,952 blocks, 31,232 tokens, 1.56× at 20,000 tokens per request
    result = run_json(
        capsys, "capacity", "--model", "llama-3.1-8b", "--kv-memory-gib", "3.8125", "--max-model-len", "20000"
    )
    assert (result["num_blocks"], result["tokens"]) == (1952, 31_232)
    assert round(result["max_concurrency"], 2) == 1.56
    assert result["fits"] is True
    assert {"kv_pool_bytes", "bytes_per_token", "estimated_max_model_len"} <= set(result)


def test_capacity_says_when_one_request_does_not_fit(capsys):
    args = ["capacity", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--max-model-len", "131072"]
    result = run_json(capsys, *args)
    assert result["fits"] is False
    assert 0 < result["estimated_max_model_len"] < 131_072


def test_decode_gives_time_per_token_and_throughput(capsys):
    result = run_json(
        capsys, "decode", "--model", "llama-3.1-70b", "--context", "1000000", "--gpu", "h100-sxm", "--kv-only"
    )
    assert result["bytes_per_step"] == 327.68e9
    assert result["step_time_s"] == pytest.approx(0.0978, abs=1e-4)
    assert result["tokens_per_s"] == pytest.approx(1 / result["step_time_s"])
    assert "tokens_per_s_total" in result


def test_prefill_gives_flops_and_ttft(capsys):
    result = run_json(capsys, "prefill", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "1000")
    assert result["flops"] > 2 * 8.03e9 * 1000
    assert result["ttft_s"] == pytest.approx(result["flops"] / 989.4e12, rel=1e-3)


def test_models_and_gpus_list_the_data_files(capsys):
    assert len(run_json(capsys, "models")["models"]) >= 30
    assert len(run_json(capsys, "gpus")["gpus"]) >= 20


BAD_INPUTS = [
    (["kv", "--model", "nope"], "unknown model"),
    (["kv", "--model", "llama-3.1-8b", "--context", "-5"], "must be > 0"),
    (["kv", "--model", "llama-3.1-8b", "--context", "0"], "must be > 0"),
    (["kv", "--model", "llama-3.1-8b", "--context", "nan"], "finite"),
    (["kv", "--model", "llama-3.1-8b", "--context", "inf"], "finite"),
    (["kv", "--model", "llama-3.1-8b", "--context", "lots"], "not a number"),
    (["kv", "--model", "llama-3.1-8b", "--kv-dtype", "fp6"], "unknown dtype"),
    (["kv", "--model", "llama-3.1-8b", "--kv-heads", "5"], "must divide"),
    (["kv", "--layers", "4", "--kv-heads", "3", "--q-heads", "8", "--head-dim", "64"], "must divide"),
    (["kv"], "choose a model"),
    (["kv", "--config", "/nonexistent/config.json"], "not found"),
    (["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpu-memory-utilization", "1.2"], "≤ 1"),
    (["capacity", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpu-memory-utilization", "0"], "> 0"),
    (["capacity", "--model", "llama-3.1-8b", "--gpu", "nope"], "unknown GPU"),
    (["capacity", "--model", "llama-3.1-8b"], "--gpu"),
    (["decode", "--model", "llama-3.1-8b"], "--bandwidth-gbs"),
    (["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS)
def test_bad_input_exits_2_with_one_line_on_stderr(capsys, args, message):
    assert exit_code(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_bad_config_content_exits_2(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text("{not json", encoding="utf-8")
    assert main(["kv", "--config", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_the_module_runs_as_a_program():
    done = subprocess.run(
        [sys.executable, "-m", "kvcore", "kv", "--model", "gpt2", "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0 and json.loads(done.stdout)["bytes_per_token"] == 2 * 12 * 12 * 64 * 2
    bad = subprocess.run([sys.executable, "-m", "kvcore", "kv", "--context", "x"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def exit_code(args):
    """main's exit code, whether it returns it or argparse raises SystemExit."""
    try:
        return main(args)
    except SystemExit as stop:
        return stop.code


def test_the_weights_format_defaults_to_the_checkpoints_own(capsys):
    args = ["capacity", "--model", "gpt-oss-120b", "--gpu", "h100-sxm", "--max-model-len", "131072"]
    result = run_json(capsys, *args)
    # MXFP4 experts, BF16 attention and embeddings (counted by component, not 117e9 · 4.25 / 8)
    assert result["weights_bytes"] == kvcore.checkpoint_weights(kvcore.load_models()["gpt-oss-120b"]).total_bytes
    assert result["weights_bytes"] > 117e9 * 4.25 / 8
    # vLLM refuses it on one H100 (data/vllm_logs/vllm_27508_gptoss120b_h100_095_refused.txt: at 0.95, 1.71 GiB)
    assert result["fits"] is False


def test_a_sliding_window_also_holds_the_scheduled_chunk(capsys):
    args = ["capacity", "--model", "gpt-oss-20b", "--kv-memory-gib", "4", "--max-model-len", "131072"]
    big_chunks = run_json(capsys, *args)["max_concurrency"]
    small_chunks = run_json(capsys, *args, "--max-num-batched-tokens", "512")["max_concurrency"]
    assert small_chunks > big_chunks


def test_decode_is_memory_bound_and_prefill_compute_bound_on_an_h100(capsys):
    decode = run_json(capsys, "decode", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "8")
    prefill = run_json(capsys, "prefill", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "4096")
    assert decode["bound"] == "memory" and decode["arithmetic_intensity_flop_per_byte"] < 295
    assert prefill["bound"] == "compute" and prefill["arithmetic_intensity_flop_per_byte"] > 295
    assert decode["ridge_point_flop_per_byte"] == pytest.approx(295.3, abs=0.1)


def test_a_config_that_lacks_a_field_names_it(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text('{"num_hidden_layers": 2, "hidden_size": 64}', encoding="utf-8")
    assert main(["kv", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "num_attention_heads" in err and err.count("\n") == 1


def test_a_config_counts_its_parameters_so_weights_need_no_params_option(capsys):
    # Llama 3.1 8B in BF16: 8,030,261,248 parameters · 2 B (counted from its config.json)
    args = ["capacity", "--config", str(CONFIGS / "llama-3.1-8b.json"), "--gpu", "h100-sxm"]
    assert run_json(capsys, *args)["weights_bytes"] == 8_030_261_248 * 2


def test_a_config_reading_lists_its_assumptions_in_json(capsys):
    result = run_json(capsys, "kv", "--config", str(CONFIGS / "gemma-3-27b-it.json"))
    assumed = {a["field"]: a for a in result["assumptions"]}
    assert assumed["vocab_size"]["code"] == "default_value" and assumed["vocab_size"]["value"] == "262208"
    assert result["bytes_per_token"] == 507_904  # 2 · 62 layers · 16 KV heads · 128 · 2 B, windows included


def test_text_output_ends_with_one_assumed_line_per_assumption(capsys):
    assert main(["kv", "--config", str(CONFIGS / "qwen2.5-7b.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assumed = [line for line in lines if line.startswith("assumed: ")]
    assert assumed and lines[-len(assumed) :] == assumed
    assert any("use_sliding_window is false" in line for line in assumed)


def test_models_with_a_config_prints_its_reading(capsys):
    result = run_json(capsys, "models", "--config", str(CONFIGS / "deepseek-v3.json"))
    assert (result["attention"], result["layers"], result["bf16_bytes_per_token"]) == ("MLA", 61, 70_272)
    assert result["total_params"] == 671_026_419_200 and result["read_exactly"] is True
    assert result["code"].startswith("kv1~L61_") and result["assumptions"][0]["code"] == "mtp_not_counted"


def test_models_with_a_config_reads_as_text(capsys):
    assert main(["models", "--config", str(CONFIGS / "gpt2.json")]) == 0
    out = capsys.readouterr().out
    assert "total_params: 124,439,808" in out and "assumed: torch_dtype is not in the config" in out


BAD_CONFIGS = [
    ("{not json", "not valid JSON (line 1, column 2)"),
    ('{"num_hidden_layers": 2, "hidden_size": 64}', "num_attention_heads"),
    ('{"num_hidden_layers": "32", "num_attention_heads": 8, "hidden_size": 512}', "must be a whole number"),
    ('{"num_hidden_layers": 2, "num_attention_heads": 8, "hidden_size": 512, "layer_types": ["x", "y"]}', "unknown"),
    ("[1, 2]", "JSON object"),
]


@pytest.mark.parametrize(("text", "message"), BAD_CONFIGS)
@pytest.mark.parametrize("command", ["kv", "models"])
def test_a_bad_config_exits_2_with_one_line_on_stderr(tmp_path, capsys, command, text, message):
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    assert main([command, "--config", str(path)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.err.count("\n") == 1 and captured.out == ""


def test_a_library_error_is_worded_with_the_option_that_sets_its_quantity(capsys):
    # Llama 3.1 8B has 8 KV heads: tp = 3 neither divides them nor is a multiple (kvcore.kv.kv_heads_per_gpu).
    assert main(["kv", "--model", "llama-3.1-8b", "--tp", "3", "--json"]) == 2
    err = capsys.readouterr().err
    assert "error: --tp: tensor parallel size 3 must divide the 8 KV heads" in err and err.count("\n") == 1


def test_a_check_names_its_option_in_front_of_kvcores_sentence():
    from kvcore.cli import worded
    from kvcore.errors import KvError

    error = KvError("not_whole", "block size must be a whole number ≥ 1, got 0", name="block size", value=0)
    assert worded(error) == "--block-size: block size must be a whole number ≥ 1, got 0"


def test_an_unknown_parameter_count_asks_for_the_options_that_give_it():
    from kvcore.cli import worded
    from kvcore.errors import KvError

    error = KvError("params_unknown", "the parameter count of 'x' is unknown", model="x")
    assert worded(error) == "the parameter count of 'x' is unknown: give --params-b or --weights-gib"


def test_an_error_that_is_not_kvcores_is_printed_as_it_is():
    from kvcore.cli import worded

    assert worded(ValueError("unknown model 'nope':\nrun `python -m kvcore models`")) == (
        "unknown model 'nope': run `python -m kvcore models`"
    )


# --- issue 8: the pool from the GPU alone, by vLLM release ---------------------------------------------------

ISSUE_10517 = ["capacity", "--model", "llama-3.1-8b", "--gpu", "rtx-3090", "--gpu-memory-utilization", "0.9"]


def test_capacity_estimates_the_pool_the_release_leaves_and_names_every_term(capsys):
    result = run_json(capsys, *ISSUE_10517, "--max-model-len", "29000", "--vllm-version", "0.6.4.post1")
    assert {"kv_pool_bytes", "num_blocks", "tokens", "max_concurrency", "fits", "estimated_max_model_len"} <= set(
        result
    )
    assert result["vllm_version"] == "0.6.4.post1" and result["vllm_era"] == "V0"
    budget = result["budget"]
    assert {"total_memory", "utilization", "weights", "activation_peak", "non_torch", "cuda_graphs"} <= set(budget)
    assert budget["total_memory"] == 23.58 * 2**30  # what torch reports on an RTX 3090, not 24 GiB
    # vLLM #10517 at 29k: "The model's max seq len (29000) is larger than … KV cache (23648)"
    assert result["fits"] is False
    assert result["estimated_max_model_len"] == pytest.approx(23648, rel=0.02)


def test_capacity_at_20k_starts_on_that_release(capsys):
    result = run_json(capsys, *ISSUE_10517, "--max-model-len", "20000", "--vllm-version", "0.6.4.post1")
    assert result["fits"] is True
    assert result["num_blocks"] == pytest.approx(1952, rel=0.015)  # log: "GPU blocks: 1952"


def test_capacity_defaults_to_the_newest_modelled_release(capsys):
    result = run_json(capsys, *ISSUE_10517, "--max-model-len", "20000")
    assert result["vllm_version"] == kvcore.NEWEST_RELEASE
    assert result["budget"]["cuda_graphs"] > 0  # subtracted by default since 0.20.0


def test_enforce_eager_gives_the_graphs_back_to_the_pool(capsys):
    graphs = run_json(capsys, *ISSUE_10517, "--max-model-len", "20000")
    eager = run_json(capsys, *ISSUE_10517, "--max-model-len", "20000", "--enforce-eager")
    assert eager["budget"]["cuda_graphs"] == 0
    assert eager["kv_pool_bytes"] - graphs["kv_pool_bytes"] == pytest.approx(graphs["budget"]["cuda_graphs"])


def test_the_seeds_rule_is_chosen_by_its_overhead_and_labelled(capsys):
    result = run_json(capsys, *ISSUE_10517, "--overhead-gib", "1")
    assert result["budget_rule"].startswith("seed 000")
    assert result["budget"]["overhead"] == 2**30
    assert "vllm_version" not in result


def test_a_given_pool_keeps_its_meaning(capsys):
    result = run_json(
        capsys, "capacity", "--model", "llama-3.1-8b", "--kv-memory-gib", "3.8125", "--max-model-len", "20000"
    )
    assert result["num_blocks"] == 1952 and result["budget"] == {}


def test_a_memory_size_alone_is_taken_as_what_torch_reports(capsys):
    result = run_json(
        capsys,
        "capacity",
        "--model",
        "llama-3.1-8b",
        "--gpu-memory-gib",
        "23.58",
        "--max-model-len",
        "20000",
        "--vllm-version",
        "0.6.4.post1",
    )
    assert result["budget"]["total_memory"] == 23.58 * 2**30


def test_a_bad_release_number_is_one_line_and_exit_code_2(capsys):
    assert exit_code([*ISSUE_10517, "--vllm-version", "latest"]) == 2
    err = capsys.readouterr().err
    assert "vLLM release number" in err and err.count("\n") == 1
