import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { Any } from "../protobuf/any";
/**
 * The parts of google/rpc/status.proto and google/rpc/error_details.proto
 * (Apache-2.0, googleapis) this client reads: the status details of
 * UNAVAILABLE carry an ErrorInfo saying what each master said.
 */
export interface Status {
    code: number;
    message: string;
    details: Any[];
}
export interface ErrorInfo {
    reason: string;
    domain: string;
    metadata: {
        [key: string]: string;
    };
}
export interface ErrorInfo_MetadataEntry {
    key: string;
    value: string;
}
export declare const Status: MessageFns<Status>;
export declare const ErrorInfo: MessageFns<ErrorInfo>;
export declare const ErrorInfo_MetadataEntry: MessageFns<ErrorInfo_MetadataEntry>;
interface MessageFns<T> {
    encode(message: T, writer?: BinaryWriter): BinaryWriter;
    decode(input: BinaryReader | Uint8Array, length?: number): T;
}
export {};
